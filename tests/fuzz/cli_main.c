/* The command line of `planner` as a function the CLI fuzz target calls:
 * planner/main.c with its main renamed. */
#define main pl_cli_main
#include "planner/main.c"
