"""python::planner -- the Python module over libplanner (python/planner).

Runs with the standard library only. Environment (tests/CMakeLists.txt sets it):
PLANNER_LIBRARY the libplanner.so to test, PLANNER_CLI the planner command of
the same build (for `planner cost` and `planner export` beside the module's),
PL_SOURCE_DIR the checkout (models, fixtures, the example, and the package
unless PLANNER_PYTHON_INSTALLED is set: then it is imported from sys.path, as
an installed one is).
"""

import json
import math
import os
import pydoc
import subprocess
import sys
import tempfile
import unittest

SRC = os.environ.get("PL_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", "..")
)
if not os.environ.get("PLANNER_PYTHON_INSTALLED"):
    sys.path.insert(0, os.path.join(SRC, "python"))

import planner  # noqa: E402

TINY = os.path.join(SRC, "tests", "fixtures", "models", "gpt-tiny.json")
SMALL = os.path.join(SRC, "examples", "gpt-small.json")
BAD = os.path.join(SRC, "tests", "fixtures", "bad_models", "bad_dtype.json")
FRAMEWORK_LISTS = {
    "megatron": "megatron_args.txt",
    "nemo": "nemo_keys.txt",
    "torchtitan": "torchtitan_keys.txt",
    "mindformers": "mindformers_keys.txt",
}
CLI = os.environ.get("PLANNER_CLI")


def published(framework):
    """A framework's published keys (tests/fixtures/frameworks/, comments dropped)."""
    path = os.path.join(SRC, "tests", "fixtures", "frameworks", FRAMEWORK_LISTS[framework])
    with open(path) as f:
        return {line.strip() for line in f if line.strip() and not line.startswith("#")}


def model_ops_and_params(path):
    with open(path) as f:
        m = json.load(f)
    params = {n for n, t in m["tensors"].items() if t.get("role") == "param"}
    return {op["name"] for op in m["ops"]}, params


class Search(unittest.TestCase):
    def test_search_a_zoo_model(self):
        with planner.Planner(device_num=4) as p:
            plan = p.search(TINY)
        # the plan outlives its planner
        ckpt = plan.as_dict()
        self.assertEqual(ckpt["format"], "planner.strategy/1")
        ops, params = model_ops_and_params(TINY)
        self.assertEqual(set(ckpt["parallel_strategy_item"]), ops)
        self.assertEqual(set(ckpt["parallel_layout_item"]), params)
        self.assertEqual(ckpt["cluster"]["devices"], 4)
        self.assertGreater(plan.step_seconds, 0)
        self.assertEqual(plan.step_seconds, ckpt["cost"]["step_seconds"])
        self.assertEqual(plan.peak_memory_bytes, ckpt["cost"]["peak_memory_bytes"])
        lo, hi = plan.step_band
        self.assertLessEqual(lo, plan.step_seconds)
        self.assertGreaterEqual(hi, plan.step_seconds)
        d = plan.degrees
        self.assertEqual(set(d), {"dp", "tp", "pp", "ep", "sp"})
        self.assertEqual(4 % (d["dp"] * d["tp"] * d["pp"]), 0)
        # rank 0's data-parallel group has dp ranks, rank 0 among them
        self.assertEqual(len(plan.group("dp", 0)), d["dp"])
        self.assertIn(0, plan.group("dp", 0))
        self.assertEqual(plan.group("dp"), plan.group("dp", 0))  # global_rank 0
        # every op's strategy: one tuple per input
        strategies = plan.strategies
        self.assertEqual(set(strategies), ops)
        self.assertTrue(all(isinstance(s, list) and s for s in strategies.values()))

    def test_settings_shape_the_plan(self):
        with planner.Planner(devices=8, model_parallel=2) as p:
            self.assertEqual(p.get("device_num"), "8")
            self.assertEqual(p["model_parallel"], "2")
            plan = p.search(SMALL)
        self.assertEqual(plan.degree("tp"), 2)
        self.assertEqual(plan.degree("dp"), 4)
        self.assertEqual(plan.group("tp", 3), [2, 3])

    def test_model_as_dict_and_handle(self):
        with open(TINY) as f:
            as_dict = json.load(f)
        with planner.Planner(device_num=2) as p:
            a = p.search(as_dict)
            with p.load_model(TINY) as m:
                b = p.search(m)
        key = "parallel_strategy_item"
        self.assertEqual(a.as_dict()[key], b.as_dict()[key])

    def test_save_writes_the_checkpoint(self):
        plan = planner.search(TINY, device_num=2)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "plan.json")
            plan.save(path)
            with open(path) as f:
                self.assertEqual(json.load(f), plan.as_dict())
            self.assertEqual(os.listdir(d), ["plan.json"])  # no temporary left


class Cost(unittest.TestCase):
    def test_cost_of_the_searched_plan_is_its_step(self):
        with planner.Planner(device_num=4) as p:
            plan = p.search(TINY)
            for given in (plan, plan.as_dict(), plan.json):
                priced = p.cost(TINY, given)
                self.assertEqual(priced.step_seconds, plan.step_seconds)
                self.assertEqual(priced.peak_memory_bytes, plan.peak_memory_bytes)
                self.assertTrue(priced.fits)

    @unittest.skipUnless(CLI, "PLANNER_CLI not set")
    def test_cost_equals_the_command(self):
        plan = planner.search(SMALL, device_num=8, model_parallel=2)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "plan.json")
            plan.save(path)
            out = subprocess.run(
                [CLI, "cost", SMALL, "--strategy", path], check=True, capture_output=True, text=True
            ).stdout
            cli = json.loads(out)
            api = planner.cost(SMALL, path)  # priced on the cluster the plan records
        self.assertTrue(math.isclose(cli["step_seconds"], plan.step_seconds, rel_tol=1e-12))
        self.assertTrue(
            math.isclose(cli["peak_memory_bytes"], plan.peak_memory_bytes, rel_tol=1e-12)
        )
        self.assertEqual(set(api.cost), set(cli))  # the same cost object
        for k in ("step_seconds", "compute_seconds", "communication_seconds", "peak_memory_bytes"):
            self.assertTrue(math.isclose(api.cost[k], cli[k], rel_tol=1e-12), k)

    def test_a_plan_given_as_strategies_only(self):
        plan = planner.search(TINY, device_num=4)
        bare = {"parallel_strategy_item": plan.as_dict()["parallel_strategy_item"]}
        with planner.Planner(device_num=4) as p:  # no cluster block: the context's
            priced = p.cost(TINY, bare)
        self.assertEqual(priced.step_seconds, plan.step_seconds)
        self.assertEqual(priced.as_dict()["cluster"]["devices"], 4)

    def test_a_plan_that_does_not_fit_is_priced(self):
        plan = planner.search(TINY, device_num=4)
        with planner.Planner(device_num=4, memory_limit="1K", memory_reserve=0) as p:
            priced = p.cost(TINY, plan)
        self.assertFalse(priced.fits)
        self.assertEqual(priced.cost["memory_limit_bytes"], 1000)

    def test_an_invalid_strategy_names_the_op(self):
        ckpt = planner.search(TINY, device_num=4).as_dict()
        op = sorted(ckpt["parallel_strategy_item"])[0]
        ckpt["parallel_strategy_item"][op]["parallel_strategy"] = [[7] * 9]
        with self.assertRaises(planner.InvalidInputError) as cm:
            planner.cost(TINY, ckpt, device_num=4)
        self.assertIn(op, str(cm.exception))
        self.assertEqual(cm.exception.code, 2)


class FrameworkDefaults(unittest.TestCase):
    def test_a_framework_prices_as_it_runs_and_a_setting_wins(self):
        # NeMo's defaults (docs/cost-model.md, "Pricing defaults of --framework"): its
        # recipes' fused loss and overlapped gradient reduction; overlap_grad_reduce set wins
        d = planner.search(SMALL, device_num=8, framework="nemo").as_dict()
        self.assertEqual(d["search"]["framework_defaults"]["loss_kernel"], "fused")
        self.assertEqual(d["cluster"]["description"]["device"]["loss_kernel"], "fused")
        self.assertTrue(d["pipeline"]["overlap_grad_reduce"])
        d = planner.search(SMALL, device_num=8, framework="nemo",
                           overlap_grad_reduce=False).as_dict()
        self.assertNotIn("overlap_grad_reduce", d["search"]["framework_defaults"])
        self.assertFalse(d["pipeline"]["overlap_grad_reduce"])


class Export(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # tp 2 with sequence parallelism: a plan every framework but DeepSpeed states
        cls.plan = planner.search(SMALL, device_num=8, model_parallel=2, use_seq_parallel=True)

    def test_megatron_arguments(self):
        text = planner.export(self.plan, "megatron")
        self.assertIn("--tensor-model-parallel-size 2", text)
        self.assertIn("--pipeline-model-parallel-size 1", text)
        self.assertIn("--sequence-parallel", text)
        self.assertIn("--micro-batch-size", text)
        self.assertIn("--global-batch-size 16", text)  # gpt-small's batch
        self.assertIn("Megatron-LM core_v0.15.0", text)

    def test_keys_are_the_frameworks_published_ones(self):
        with planner.Planner() as p:
            for fw in FRAMEWORK_LISTS:
                with self.subTest(framework=fw):
                    d = p.export_dict(self.plan, fw)
                    self.assertEqual(d["framework"], fw)
                    self.assertTrue(d["keys"])
                    self.assertLessEqual(set(d["keys"]), published(fw))
                    self.assertEqual(d["text"], p.export(self.plan, fw))
        keys = planner.Planner().export_dict(self.plan, "torchtitan")["keys"]
        self.assertEqual(str(keys["parallelism.tensor_parallel_degree"]), "2")

    def test_from_a_file_a_dict_and_a_plan_alike(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "plan.json")
            self.plan.save(path)
            a = planner.export(path, "nemo")
        self.assertEqual(a, planner.export(self.plan.as_dict(), "nemo"))
        self.assertEqual(a, planner.export(self.plan, "nemo"))

    @unittest.skipUnless(CLI, "PLANNER_CLI not set")
    def test_same_arguments_as_the_command(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "plan.json")
            self.plan.save(path)
            cli = subprocess.run(
                [CLI, "export", path, "--to", "megatron"],
                check=True, capture_output=True, text=True,
            ).stdout
        body = lambda t: [line for line in t.splitlines() if not line.startswith("#")]  # noqa: E731
        self.assertEqual(body(planner.export(self.plan, "megatron")), body(cli))

    def test_a_plan_the_framework_cannot_state(self):
        # DeepSpeed's config states data parallelism and ZeRO only
        with self.assertRaises(planner.InvalidInputError) as cm:
            planner.export(self.plan, "deepspeed")
        self.assertIn("tp 2", str(cm.exception))
        with self.assertRaises(planner.InvalidInputError) as cm:
            planner.export(self.plan, "caffe")
        self.assertIn("unknown framework 'caffe'", str(cm.exception))


class Errors(unittest.TestCase):
    def test_bad_model_file(self):
        with planner.Planner(device_num=2) as p:
            with self.assertRaises(planner.InvalidInputError) as cm:
                p.search(BAD)
        e = cm.exception
        self.assertEqual(e.code, 2)
        self.assertIsInstance(e, ValueError)
        self.assertIsInstance(e, planner.PlannerError)
        self.assertIn("bad_dtype.json", e.message)
        self.assertIn("dtype", str(e))
        with self.assertRaises(planner.InvalidInputError) as cm:
            planner.search(os.path.join(SRC, "no-such-model.json"))
        self.assertIn("no-such-model.json", str(cm.exception))

    def test_impossible_memory_limit(self):
        with self.assertRaises(planner.NoPlanError) as cm:
            planner.search(TINY, device_num=2, memory_limit="1K", memory_reserve=0)
        e = cm.exception
        self.assertEqual(e.code, 3)
        self.assertNotIsInstance(e, planner.InvalidInputError)
        self.assertIn("memory limit", str(e))

    def test_bad_settings(self):
        with self.assertRaises(planner.InvalidInputError) as cm:
            planner.Planner(no_such_key=1)
        self.assertIn("no_such_key", str(cm.exception))
        with self.assertRaises(planner.InvalidInputError) as cm:
            planner.Planner(device_num=0)
        self.assertIn("device_num", str(cm.exception))
        with self.assertRaises(planner.InvalidInputError):
            planner.Planner().get("no_such_key")
        p = planner.Planner(enable_parallel_optimizer=True)
        self.assertEqual(p.get("enable_parallel_optimizer"), "true")
        p.reset()
        self.assertEqual(p.get("enable_parallel_optimizer"), "false")
        with self.assertRaises(planner.InvalidInputError):
            planner.search(TINY).degree("xp")

    def test_closed_handles(self):
        with planner.Planner() as p:
            pass
        with self.assertRaises(planner.InvalidInputError):
            p.search(TINY)
        p.close()  # a second close does nothing
        plan = planner.search(TINY, device_num=2)
        plan.close()
        with self.assertRaises(planner.InvalidInputError):
            plan.step_seconds

    def test_system_failure_class(self):
        e = planner.PlannerSystemError("x", 4)
        self.assertIsInstance(e, OSError)
        # a file that cannot be written: the library's code 4
        unwritable = "/proc/no/such/dir/plan.json"
        with planner.Planner(device_num=2, strategy_ckpt_save_file=unwritable) as p:
            with self.assertRaises(planner.PlannerSystemError) as cm:
                p.search(TINY)
        self.assertEqual(cm.exception.code, 4)


class Library(unittest.TestCase):
    def test_loaded(self):
        self.assertTrue(os.path.exists(planner.library_path()))
        self.assertEqual(planner.library_version(), planner.__version__)

    def run_python(self, code, **env):
        e = dict(os.environ)
        e.update(env)
        if not os.environ.get("PLANNER_PYTHON_INSTALLED"):
            code = "import sys; sys.path.insert(0, %r)\n" % os.path.join(SRC, "python") + code
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e)

    def test_not_found_says_where_it_looked(self):
        r = self.run_python(
            "import planner\n"
            "try:\n    planner.search('x.json')\n"
            "except planner.LibraryNotFoundError as e:\n    print('NOTFOUND', e)\n",
            PLANNER_LIBRARY="/nonexistent/libplanner.so",
        )
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("NOTFOUND", r.stdout)
        self.assertIn("PLANNER_LIBRARY", r.stdout)
        self.assertIn("/nonexistent/libplanner.so", r.stdout)

    def test_help_without_the_library(self):
        r = self.run_python(
            "import planner, pydoc\nprint(pydoc.render_doc(planner, renderer=pydoc.plaintext))",
            PLANNER_LIBRARY="/nonexistent/libplanner.so",
        )
        self.assertEqual(r.returncode, 0, r.stderr)
        words = ("class Planner", "search(model", "export(plan", "NoPlanError", "PLANNER_LIBRARY")
        for word in words:
            self.assertTrue(word in r.stdout, word)

    def test_help_of_the_methods(self):
        text = pydoc.render_doc(planner.Planner, renderer=pydoc.plaintext)
        words = ("search(self, model)", "cost(self, model, plan)", "export(self, plan", "megatron")
        for word in words:
            self.assertTrue(word in text, word)


class Example(unittest.TestCase):
    def test_plan_for_megatron(self):
        script = os.path.join(SRC, "examples", "python", "plan_for_megatron.py")
        env = dict(os.environ)
        if not os.environ.get("PLANNER_PYTHON_INSTALLED"):
            env["PYTHONPATH"] = os.path.join(SRC, "python")
        r = subprocess.run(
            [sys.executable, script, "--devices", "8", "--tensor-parallel", "2"],
            capture_output=True, text=True, env=env,
        )
        self.assertEqual(r.returncode, 0, r.stderr)
        cmd = [line for line in r.stdout.splitlines() if line.startswith("torchrun")]
        self.assertEqual(len(cmd), 1, r.stdout)
        args = cmd[0].split()
        self.assertIn("pretrain_gpt.py", args)
        i = args.index("--tensor-model-parallel-size")
        self.assertEqual(args[i + 1], "2")
        self.assertEqual(args[args.index("--nproc-per-node") + 1], "8")
        self.assertEqual(args[args.index("--num-layers") + 1], "4")  # gpt-small's
        self.assertIn("--global-batch-size", args)


if __name__ == "__main__":
    unittest.main(verbosity=2)
