/* planner report on any checkpoint-shaped input: the page it writes carries
 * only the report's own markup. Every tag must be one the report writes,
 * every attribute one it writes with a double-quoted value, every & an
 * entity; anything else is a string of the input that escaped into markup
 * (script a browser would run), and the target aborts. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "graph/json.h"
#include "planner/report.h"
#include "tests/fuzz/fuzz.h"

static const char *const tags[] = {
    "!DOCTYPE", "html",   "head",       "meta", "title",   "style", "body", "h1",   "h2",
    "h3",       "p",      "b",          "i",    "section", "svg",   "rect", "text", "g",
    "line",     "figure", "figcaption", "div",  "table",   "tr",    "th",   "td",   NULL};
static const char *const attrs[] = {
    "lang",       "charset",       "class",        "id",   "x",          "y",
    "width",      "height",        "fill",         "role", "aria-label", "data-kind",
    "data-stage", "data-category", "data-link",    "x1",   "y1",         "x2",
    "y2",         "stroke",        "stroke-width", "html", NULL};

static int listed(const char *const *list, const char *s, size_t n)
{
	for (int i = 0; list[i]; i++)
		if (strlen(list[i]) == n && !strncmp(list[i], s, n))
			return 1;
	return 0;
}

static void fail(const char *page, const char *at, const char *why)
{
	fprintf(stderr, "report: %s at byte %ld: %.80s\n", why, (long)(at - page), at);
	abort();
}

/* An entity at p (after '&'): a name or a decimal code, then ';'. */
static int entity(const char *p)
{
	const char *q = p + (*p == '#');
	size_t n = 0;
	while (isalnum((unsigned char)q[n]))
		n++;
	return n > 0 && n < 10 && q[n] == ';';
}

static void check_page(const char *page)
{
	for (const char *p = page; *p;) {
		if (*p == '&' && !entity(p + 1))
			fail(page, p, "a bare & in text");
		if (*p == '>')
			fail(page, p, "a > outside a tag");
		if (*p != '<') {
			p++;
			continue;
		}
		p += 1 + (p[1] == '/');
		size_t n = 0;
		while (p[n] && (isalnum((unsigned char)p[n]) || p[n] == '!'))
			n++;
		if (!listed(tags, p, n))
			fail(page, p, "a tag the report does not write");
		int style = n == 5 && !strncmp(p, "style", 5) && p[-1] != '/';
		p += n;
		for (;;) { /* attributes, then > or /> */
			while (*p == ' ')
				p++;
			if (*p == '>' || (p[0] == '/' && p[1] == '>'))
				break;
			size_t a = 0;
			while (isalnum((unsigned char)p[a]) || p[a] == '-')
				a++;
			if (!a || !listed(attrs, p, a))
				fail(page, p, "an attribute the report does not write");
			p += a;
			if (*p != '=')
				continue; /* <!DOCTYPE html> */
			if (p[1] != '"')
				fail(page, p, "an unquoted attribute value");
			p += 2;
			for (; *p != '"'; p++) {
				if (!*p || *p == '<' || *p == '>')
					fail(page, p, "an attribute value with < or > or no end");
				if (*p == '&' && !entity(p + 1))
					fail(page, p, "a bare & in an attribute");
			}
			p++;
		}
		p += *p == '/' ? 2 : 1;
		if (style) { /* the stylesheet is the report's own text */
			const char *end = strstr(p, "</style>");
			if (!end)
				fail(page, p, "a style element without its end");
			p = end;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pl_err err;
	cJSON *ck;
	if (pl_json_parse((const char *)data, size, "fuzz.json", &ck, &err))
		return 0;
	char *page = NULL;
	if (!pl_report_html(ck, "fuzz<\"'&>.json", &page, &err))
		check_page(page);
	free(page);
	cJSON_Delete(ck);
	return 0;
}
