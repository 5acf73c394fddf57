/* Uses the installed library: plans a two-layer model built in code on two
 * devices and trains it two steps; exit 0 when the loss goes down. */
#include <stdio.h>

#include <planner/planner.h>

int main(void)
{
	planner_ctx *ctx = planner_ctx_new();
	planner_graph *g = planner_graph_new(ctx, "consumer", NULL);
	planner_plan *plan = NULL;
	planner_trainer *tr = NULL;
	const int64_t x[2] = {16, 32}, w[2] = {32, 32}, lab[1] = {16};
	const char *l1[] = {"x", "w1"}, *act[] = {"h"}, *l2[] = {"a", "w2"},
	           *loss[] = {"y", "labels"};
	double before = 0, after = 0;
	int rc = planner_set_auto_parallel_context(ctx, "device_num", "2") ||
	         planner_set_auto_parallel_context(ctx, "learning_rate", "0.05") ||
	         planner_graph_tensor(g, "x", "input", NULL, 2, x) ||
	         planner_graph_tensor(g, "labels", "input", "int32", 1, lab) ||
	         planner_graph_tensor(g, "w1", "param", NULL, 2, w) ||
	         planner_graph_tensor(g, "w2", "param", NULL, 2, w) ||
	         planner_graph_op(g, "MatMul", "fc1", l1, 2, "h", NULL) ||
	         planner_graph_op(g, "Relu", "act", act, 1, "a", NULL) ||
	         planner_graph_op(g, "MatMul", "fc2", l2, 2, "y", NULL) ||
	         planner_graph_op(g, "SoftmaxCrossEntropy", "loss", loss, 2, "l", NULL) ||
	         planner_graph_output(g, "l") || planner_plan_new(ctx, g, &plan) ||
	         planner_trainer_new(ctx, g, plan, &tr) || planner_train_step(tr, &before) ||
	         planner_train_step(tr, &after);
	if (rc)
		fprintf(stderr, "consumer: %s\n", planner_errmsg(ctx));
	else
		printf("planner %s: step %.3g s predicted; loss %.6f -> %.6f\n", planner_version(),
		       planner_plan_step_seconds(plan), before, after);
	planner_trainer_free(tr);
	planner_plan_free(plan);
	planner_graph_free(g);
	planner_ctx_free(ctx);
	return rc ? 1 : !(after < before);
}
