/* Every option of the commands' shared options table (pl_cli_options,
 * planner/commands/common.c) is named in the --help of each command the
 * table gives it to: the table builds the getopt tables, the help texts are
 * written by hand beside each command, and an option a command takes but
 * its help does not name is one a user cannot find. Each command's --help
 * is run in-process with stdout redirected to a file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "planner/commands/cli.h"
#include "planner/commands/commands.h"
#include "planner/export.h"

/* the commands of the table's PL_CMD_* bits, as main.c dispatches them */
static const struct {
	unsigned bit;
	const char *name;
	int (*run)(int, char **);
} commands[] = {
    {PL_CMD_SEARCH, "search", pl_cmd_search},
    {PL_CMD_COST, "cost", pl_cmd_cost},
    {PL_CMD_STRATEGIES, "strategies", pl_cmd_strategies},
    {PL_CMD_RUN, "run", pl_cmd_run},
    {PL_CMD_BENCH, "bench", pl_cmd_bench},
    {PL_CMD_IMPORT, "import", pl_cmd_import},
    {PL_CMD_CALIBRATE, "calibrate", pl_cmd_calibrate},
    {PL_CMD_TOPOLOGY, "topology", pl_cmd_topology},
    {PL_CMD_CHECK, "check", pl_cmd_check},
    {PL_CMD_EXPORT, "export", pl_cmd_export},
    {PL_CMD_EXPLAIN, "explain", pl_cmd_explain},
    {PL_CMD_REPORT, "report", pl_cmd_report},
};
#define NCMDS (sizeof commands / sizeof commands[0])

/* `planner NAME --help`'s output (malloc'd), its exit status in *rc */
static char *help_of(int k, int *rc)
{
	char help[] = "--help", name[32];
	snprintf(name, sizeof name, "%s", commands[k].name);
	char *argv[] = {name, help, NULL};
	FILE *tmp = tmpfile();
	assert_non_null(tmp);
	fflush(stdout);
	int saved = dup(STDOUT_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(tmp), STDOUT_FILENO) >= 0);
	*rc = commands[k].run(2, argv);
	fflush(stdout);
	assert_true(dup2(saved, STDOUT_FILENO) >= 0);
	close(saved);
	long n = ftell(tmp);
	assert_true(n > 0);
	char *text = malloc((size_t)n + 1);
	assert_non_null(text);
	rewind(tmp);
	assert_int_equal(fread(text, 1, (size_t)n, tmp), (size_t)n);
	text[n] = 0;
	fclose(tmp);
	return text;
}

/* whether text names --opt as a whole word (not --mode inside --modes) */
static int names(const char *text, const char *opt)
{
	size_t n = strlen(opt);
	for (const char *p = text; (p = strstr(p, "--")); p += 2)
		if (!strncmp(p + 2, opt, n)) {
			char c = p[2 + n];
			if (!(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '-' &&
			    c != '_')
				return 1;
		}
	return 0;
}

/* the word check itself, on texts written here */
static void names_whole_words(void **state)
{
	(void)state;
	assert_true(names("  --mode M  the search", "mode"));
	assert_true(names("--max-tp=N", "max-tp"));
	assert_false(names("  --modes LIST", "mode"));
	assert_false(names("  --pp-stages", "pp"));
	assert_false(names("  -mode", "mode"));
}

/* every PL_CMD_* bit the table uses is a command here */
static void every_bit_is_a_command(void **state)
{
	(void)state;
	for (const pl_cli_option *o = pl_cli_options; o->name; o++) {
		unsigned left = o->cmds;
		for (size_t k = 0; k < NCMDS; k++)
			left &= ~commands[k].bit;
		if (left)
			fail_msg("--%s: command bits 0x%x have no command in this test", o->name,
			         left);
	}
}

static void every_option_in_its_help(void **state)
{
	(void)state;
	int missing = 0, checked = 0;
	for (size_t k = 0; k < NCMDS; k++) {
		int rc;
		char *text = help_of((int)k, &rc);
		assert_int_equal(rc, 0);
		for (const pl_cli_option *o = pl_cli_options; o->name; o++) {
			/* --help itself: the text it prints need not name it */
			if (!(o->cmds & commands[k].bit) || !strcmp(o->name, "help"))
				continue;
			checked++;
			if (!names(text, o->name)) {
				print_error("planner %s --help does not name --%s\n",
				            commands[k].name, o->name);
				missing++;
			}
		}
		free(text);
	}
	assert_true(checked > 100); /* the table's rows times their commands */
	assert_int_equal(missing, 0);
}

/* where text names word w whole (not megatron inside megatron-deepspeed),
 * at or after from; NULL if nowhere */
static const char *word_at(const char *text, const char *from, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = from; (p = strstr(p, w)); p++) {
		char a = p > text ? p[-1] : ' ', b = p[n];
		int inner_a = (a >= 'a' && a <= 'z') || a == '-' || a == '_',
		    inner_b = (b >= 'a' && b <= 'z') || b == '-' || b == '_';
		if (!inner_a && !inner_b)
			return p;
	}
	return NULL;
}

/* The frameworks' names are typed by hand in the help texts (constant
 * strings): search --help, export --help and cost --help name every one of
 * the exporter's table (fws[], pl_export_name), in its order; and the
 * names as messages list them (pl_export_names) are that table's. */
static void frameworks_in_help(void **state)
{
	(void)state;
	char list[256];
	pl_export_names(list, sizeof list);
	const char *at = list;
	for (int i = 0; i < pl_export_count(); i++) {
		const char *p = word_at(list, at, pl_export_name(i));
		if (!p)
			fail_msg("pl_export_names \"%s\" lacks %s", list, pl_export_name(i));
		at = p + 1;
	}
	assert_non_null(strstr(list, " or mindformers"));
	for (size_t k = 0; k < NCMDS; k++) {
		const char *cmd = commands[k].name;
		if (strcmp(cmd, "search") && strcmp(cmd, "export") && strcmp(cmd, "cost"))
			continue;
		int rc;
		char *text = help_of((int)k, &rc);
		assert_int_equal(rc, 0);
		const char *from = word_at(text, text, pl_export_name(0));
		if (!from)
			fail_msg("planner %s --help names no framework", cmd);
		for (int i = 1; i < pl_export_count(); i++) {
			const char *p = word_at(text, from + 1, pl_export_name(i));
			if (!p)
				fail_msg("planner %s --help does not name %s after %s", cmd,
				         pl_export_name(i), pl_export_name(i - 1));
			from = p;
		}
		free(text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(names_whole_words),
	    cmocka_unit_test(every_bit_is_a_command),
	    cmocka_unit_test(every_option_in_its_help),
	    cmocka_unit_test(frameworks_in_help),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
