"""python3 -m reservoir.capture against the stub torch: the fake-group redirection, the
environment, the sidecar, the peak-reset index, dumps on exit / exception / OOM, DCP and the
object collectives for one rank, the FSDP groups, and usage errors."""

import json
import pickle
import textwrap

import pytest

PRELUDE = """
import json, os, sys
import torch
import torch.distributed as dist
alloc, free = torch.cuda._stub_alloc, torch.cuda._stub_free
"""


def script(tmp_path, body, name="train.py"):
    path = tmp_path / name
    path.write_text(PRELUDE + textwrap.dedent(body))
    return str(path)


def capture(kit, tmp_path, body, *options, world=8, rank=0, args=()):
    s = script(tmp_path, body)
    kit_args = ["--out", str(tmp_path / "out")] + (["--world-size", str(world), "--rank", str(rank)] if world else [])
    return kit([*kit_args, *options, "--", s, *args], cwd=tmp_path)


def sidecar(tmp_path, stem="train.w8.rank0"):
    return json.loads((tmp_path / "out" / f"{stem}.json").read_text())


def trace(tmp_path, stem="train.w8.rank0"):
    with open(tmp_path / "out" / f"{stem}.pickle", "rb") as f:
        return pickle.load(f)["device_traces"][0]


def test_init_process_group_becomes_the_fake_group_with_torchrun_environment(kit, tmp_path):
    r = capture(kit, tmp_path, """
        dist.init_process_group("nccl", timeout=None)
        from torch.distributed import distributed_c10d as c10d
        env = {k: os.environ[k] for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
        print(json.dumps({"env": env, "calls": c10d.calls, "argv": sys.argv[1:], "rank": dist.get_rank()}))
    """, world=64, rank=5, args=("--lr", "3"))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["calls"] == [{"backend": "fake", "rank": 5, "world_size": 64, "store": "FakeStore", "timeout": None}]
    assert out["env"] == {"RANK": "5", "WORLD_SIZE": "64", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1",
                          "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}
    assert out["argv"] == ["--lr", "3"] and out["rank"] == 5
    facts = sidecar(tmp_path, "train.w64.rank5")
    assert (facts["world_size"], facts["rank"]) == (64, 5)
    assert facts["capture"]["requested_backend"] == "nccl" and facts["capture"]["fake_group"] is True


def test_init_device_mesh_without_a_group_gets_the_fake_group(kit, tmp_path):
    r = capture(kit, tmp_path, """
        from torch.distributed.device_mesh import init_device_mesh
        mesh = init_device_mesh("cuda", (8,))
        from torch.distributed import distributed_c10d as c10d
        print(c10d.calls[0]["backend"], dist.get_world_size())
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-2:] == ["fake", "8"]


def test_sidecar_keys_and_values(kit, tmp_path):
    r = capture(kit, tmp_path, """
        a = alloc(1000)
        torch.cuda.set_per_process_memory_fraction(0.5)
    """, "--param", "seq=8192", "--param", "lr=0.5", "--param", "name=base", "--param", "packed=true")
    assert r.returncode == 0, r.stderr
    f = sidecar(tmp_path)
    for key in ("world_size", "rank", "config", "device_total", "device_free", "fraction", "alloc_conf", "torch",
                "memory_stats", "device_name", "overhead_outside_cache", "fsdp_groups", "dump_reason"):
        assert key in f, key
    assert f["config"] == {"seq": 8192, "lr": 0.5, "name": "base", "packed": True}
    assert f["fraction"] == 0.5 and f["torch"] == "2.99.0+stub" and f["device_name"] == "Stub GPU"
    assert f["memory_stats"]["reserved_bytes.all.current"] == 1000
    assert f["overhead_outside_cache"] == f["device_total"] - f["device_free"] - 1000 == 500 * 2**20
    assert f["dump_reason"] == "exit" and f["exception"] is None
    assert "reset_peaks_after_event" not in f  # the program never reset peaks


def test_fraction_not_set_is_written_as_zero(kit, tmp_path):
    assert capture(kit, tmp_path, "alloc(10)").returncode == 0
    assert sidecar(tmp_path)["fraction"] == 0.0


def test_reset_peaks_after_event_is_the_last_event_before_the_last_reset(kit, tmp_path):
    r = capture(kit, tmp_path, """
        blocks = [alloc(100), alloc(200), alloc(300)]   # events 0-5
        torch.cuda.reset_peak_memory_stats()             # after event 5 (alloc 300)
        free(blocks[0])                                  # events 6, 7
        torch.cuda.reset_peak_memory_stats()             # after event 7: the one that counts
        alloc(50)
    """)
    assert r.returncode == 0, r.stderr
    f = sidecar(tmp_path)
    assert f["reset_peaks_after_event"] == 7
    assert [x["after_event"] for x in f["reset_peaks"]] == [5, 7]
    events = trace(tmp_path)
    assert events[7]["action"] == "free_completed" and events[8]["size"] == 50
    assert "--reset-peaks event:7" in r.stderr
    assert f["memory_stats"]["reserved_bytes.all.peak"] == 650  # counted from the last reset


def test_reset_index_follows_a_ring_buffer(kit, tmp_path):
    r = capture(kit, tmp_path, """
        blocks = [alloc(100), alloc(200), alloc(300)]   # events 0-5
        torch.cuda.reset_peak_memory_stats()             # after the alloc of 300
        alloc(7); alloc(8)                               # 4 more: 4 oldest dropped
    """, "--max-entries", "6")
    assert r.returncode == 0, r.stderr
    f = sidecar(tmp_path)
    events = trace(tmp_path)
    assert len(events) == 6 and f["reset_peaks_after_event"] == 1
    assert events[1]["action"] == "alloc" and events[1]["size"] == 300


def test_a_reset_the_ring_buffer_dropped_is_said_so(kit, tmp_path):
    r = capture(kit, tmp_path, """
        alloc(100)
        torch.cuda.reset_peak_memory_stats()
        alloc(7); alloc(8)
    """, "--max-entries", "2")
    assert r.returncode == 0, r.stderr
    f = sidecar(tmp_path)
    assert "reset_peaks_after_event" not in f and f["reset_peaks_before_window"] is True


def test_the_scripts_own_record_memory_history_calls_do_not_stop_the_recording(kit, tmp_path):
    r = capture(kit, tmp_path, """
        torch.cuda.memory._record_memory_history(max_entries=1, stacks="python")
        alloc(100)
        torch.cuda.memory._record_memory_history(enabled=None)
        alloc(200)
    """, "--stacks", "all")
    assert r.returncode == 0, r.stderr
    assert [e["size"] for e in trace(tmp_path) if e["action"] == "alloc"] == [100, 200]
    assert sidecar(tmp_path)["emulated"]["_record_memory_history"]["calls"] == 2


def test_an_exception_writes_the_snapshot_and_exits_1(kit, tmp_path):
    r = capture(kit, tmp_path, """
        alloc(100)
        raise ValueError("bad batch")
    """)
    assert r.returncode == 1
    assert "ValueError: bad batch" in r.stderr
    f = sidecar(tmp_path)
    assert f["dump_reason"] == "exception" and f["exception"] == "ValueError: bad batch"
    assert len(trace(tmp_path)) == 2


def test_sys_exit_keeps_its_code(kit, tmp_path):
    r = capture(kit, tmp_path, "alloc(1)\nsys.exit(3)\n")
    assert r.returncode == 3
    assert sidecar(tmp_path)["dump_reason"] == "exit"


def test_an_uncaught_out_of_memory_is_dumped_as_oom(kit, tmp_path):
    r = capture(kit, tmp_path, """
        alloc(100)
        torch.cuda._stub_oom(1 << 40)
    """)
    assert r.returncode == 1
    f = sidecar(tmp_path)
    assert f["dump_reason"] == "oom"
    assert f["ooms"] == [{"device": 0, "alloc": 1 << 40, "device_allocated": 100, "device_free": 1024}]
    assert trace(tmp_path)[-1]["action"] == "oom"


def test_a_caught_out_of_memory_keeps_its_own_trace_beside_a_ring_buffer(kit, tmp_path):
    r = capture(kit, tmp_path, """
        alloc(100)
        try:
            torch.cuda._stub_oom(1 << 40)
        except torch.cuda.OutOfMemoryError:
            pass
        for i in range(10):
            alloc(i + 1)
    """, "--max-entries", "8")
    assert r.returncode == 0, r.stderr
    oom = json.loads((tmp_path / "out" / "rank0_memory_snapshot.json").read_text())  # torchtitan's name
    assert oom["dump_reason"] == "oom" and len(oom["ooms"]) == 1
    assert trace(tmp_path, "rank0_memory_snapshot")[-1]["action"] == "oom"
    assert "rank0_memory_snapshot.pickle" in r.stderr  # the summary points to it
    final = sidecar(tmp_path)
    assert final["dump_reason"] == "exit" and len(final["ooms"]) == 1
    assert all(e["action"] != "oom" for e in trace(tmp_path))  # the ring buffer dropped it


def test_dcp_save_and_load_run_for_one_rank(kit, tmp_path):
    r = capture(kit, tmp_path, """
        import torch.distributed.checkpoint as dcp
        from torch.distributed.checkpoint import state_dict_loader, state_dict_saver
        dist.init_process_group("nccl")
        dcp.save({"model": 1, "optim": 2}, checkpoint_id=sys.argv[1])
        dcp.load({"model": 1}, checkpoint_id=sys.argv[1])
        print(state_dict_saver.calls, state_dict_loader.calls)
    """, args=(str(tmp_path / "ckpt"),))
    assert r.returncode == 0, r.stderr
    assert "[{'no_dist': True, 'process_group': None}] [{'no_dist': True}]" in r.stdout
    emulated = sidecar(tmp_path)["emulated"]
    assert emulated["dcp.save"]["calls"] == 1 and emulated["dcp.load"]["calls"] == 1


def test_dcps_single_process_warning_is_explained_once_not_printed(kit, tmp_path):
    r = capture(kit, tmp_path, """
        import torch.distributed.checkpoint as dcp
        dist.init_process_group("nccl")
        for step in range(2):
            dcp.save({"model": 1}, checkpoint_id=sys.argv[1])
            dcp.load({"model": 1}, checkpoint_id=sys.argv[1])
    """, args=(str(tmp_path / "ckpt"),))
    assert r.returncode == 0, r.stderr
    assert "assuming the intent is to" not in r.stderr, r.stderr  # torch's own warning, silenced
    assert r.stderr.count("run on this rank alone (no_dist=True)") == 1, r.stderr


def test_dcp_async_save_runs_as_a_synchronous_save(kit, tmp_path):
    r = capture(kit, tmp_path, """
        import torch.distributed.checkpoint as dcp
        dist.init_process_group("nccl")
        future = dcp.async_save({"model": 1}, checkpoint_id=sys.argv[1])
        print("done", future.done())
    """, args=(str(tmp_path / "ckpt"),))
    assert r.returncode == 0, r.stderr
    assert "done True" in r.stdout and (tmp_path / "ckpt" / ".metadata").exists()


def test_gathered_objects_are_this_ranks(kit, tmp_path):
    r = capture(kit, tmp_path, """
        dist.init_process_group("nccl")
        got = [None] * 4
        dist.all_gather_object(got, {"step": 7})
        mine = [None] * 4
        dist.gather_object("x", mine, dst=2)          # rank 2 is the root: it receives
        kept = ["cfg"]
        dist.broadcast_object_list(kept, src=0)        # from another rank, the list's own value stays
        print(json.dumps([got, mine, kept]))
    """, world=4, rank=2)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1]) == [[{"step": 7}] * 4, ["x"] * 4, ["cfg"]]


def test_an_object_from_another_rank_stops_the_run_and_says_what(kit, tmp_path):
    r = capture(kit, tmp_path, """
        dist.init_process_group("nccl")
        alloc(100)
        box = [None]
        dist.broadcast_object_list(box, src=1)
    """, world=4, rank=0)
    assert r.returncode == 2
    assert "broadcast_object_list from rank 1" in r.stderr and "--rank 1" in r.stderr
    assert sidecar(tmp_path, "train.w4.rank0")["dump_reason"] == "exception"  # the trace up to there is still written


def test_fsdp_groups_record_global_shapes_dtypes_and_module_paths(kit, tmp_path):
    r = capture(kit, tmp_path, """
        import torch.nn as nn
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        dist.init_process_group("nccl")
        model = nn.Module(layers=nn.Module(l0=nn.Linear(16, 64), l1=nn.Linear(64, 16)), head=nn.Linear(16, 1000))
        policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for name in ("l0", "l1"):
            fully_shard(model._children["layers"]._children[name], mp_policy=policy)
        fully_shard(model, mp_policy=policy, reshard_after_forward=False)
        print(fully_shard.state)
    """, world=8)
    assert r.returncode == 0, r.stderr
    assert "the contract's state accessor" in r.stdout  # the wrapper keeps fully_shard's attributes
    groups = sidecar(tmp_path)["fsdp_groups"]
    assert [g["modules"] for g in groups] == [["layers.l0"], ["layers.l1"], [""]]
    assert [g["classes"] for g in groups] == [["Linear"], ["Linear"], ["Module"]]
    assert groups[0]["params"] == [{"name": "layers.l0.weight", "shape": [64, 16], "dtype": "torch.float32",
                                    "requires_grad": True, "local_shape": [8, 16]}]
    assert [p["name"] for p in groups[2]["params"]] == ["head.weight"]
    assert groups[2]["params"][0]["local_shape"] == [125, 16]
    assert groups[0]["mp_policy"]["param_dtype"] == "torch.bfloat16"
    assert groups[2]["reshard_after_forward"] is False


def test_a_module_runs_with_dash_m(kit, tmp_path):
    (tmp_path / "mytrain.py").write_text(PRELUDE + "alloc(5)\nprint('argv', sys.argv[1:])\n")
    r = kit(["--world-size", "2", "--out", str(tmp_path / "out"), "--", "-m", "mytrain", "x"], cwd=tmp_path,
            env_extra=None)
    assert r.returncode == 0, r.stderr
    assert "argv ['x']" in r.stdout and (tmp_path / "out" / "mytrain.w2.rank0.pickle").exists()


def test_without_world_size_a_real_rank_is_recorded_as_it_runs(kit, tmp_path):
    s = script(tmp_path, "alloc(5)\nprint('init' if dist.is_initialized() else 'no group')\n")
    r = kit(["--out", str(tmp_path / "out"), "--", s], cwd=tmp_path,
            env_extra={"RANK": "2", "WORLD_SIZE": "4", "LOCAL_RANK": "0"})
    assert r.returncode == 0, r.stderr
    assert "no group" in r.stdout
    f = sidecar(tmp_path, "train.w4.rank2")
    assert (f["world_size"], f["rank"], f["capture"]["fake_group"]) == (4, 2, False)


def test_captures_at_several_world_sizes_into_one_folder_keep_their_own_files(kit, tmp_path):
    for world in (2, 4):
        assert capture(kit, tmp_path, "alloc(%d)\n" % world, world=world).returncode == 0
    assert sidecar(tmp_path, "train.w2.rank0")["world_size"] == 2
    assert sidecar(tmp_path, "train.w4.rank0")["world_size"] == 4


def test_keep_steps_keeps_only_the_last_steps_history(kit, tmp_path):
    r = capture(kit, tmp_path, """
        import time
        opt = torch.optim.Optimizer()
        for step in range(5):
            alloc(1000 + step)
            time.sleep(0.002)
            opt.step()
            time.sleep(0.002)
        alloc(7)
    """, "--keep-steps", "2")
    assert r.returncode == 0, r.stderr
    sizes = [e["size"] for e in trace(tmp_path) if e["action"] == "alloc"]
    assert sizes == [1003, 1004, 7]  # the last two steps, and what followed them
    kept = sidecar(tmp_path)["keep_steps"]
    assert kept["asked"] == 2 and kept["steps_seen"] == 5 and kept["dropped_events"] == 6


def test_keep_steps_with_fewer_steps_keeps_everything(kit, tmp_path):
    r = capture(kit, tmp_path, """
        opt = torch.optim.Optimizer()
        alloc(1); opt.step(); alloc(2)
    """, "--keep-steps", "3")
    assert r.returncode == 0, r.stderr
    assert [e["size"] for e in trace(tmp_path) if e["action"] == "alloc"] == [1, 2]
    assert "fewer steps" in sidecar(tmp_path)["keep_steps"]["note"]


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_needs_neither_torch_nor_a_program(kit, tmp_path, flag):
    r = kit([flag], cwd=tmp_path, stub=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: python3 -m reservoir.capture") and "--keep-steps" in r.stdout


@pytest.mark.parametrize("args, message", [
    (["--world-size", "8", "train.py"], "put '--' before the program"),
    (["--world-size", "8", "--"], "no program after '--'"),
    (["--world-size", "8", "--param", "seq", "--", "train.py"], "expected NAME=VALUE"),
    (["--world-size", "4", "--rank", "4", "--", "train.py"], "--rank must be in [0, 3]"),
    (["--world-size", "0", "--", "train.py"], "--world-size must be at least 1"),
    (["--world-size", "2", "--", "missing.py"], "missing.py: no such file"),
    (["--world-size", "2", "--max-entries", "0", "--", "train.py"], "max_entries must be at least 1"),
    (["--rank", "3", "--", "train.py"], "--rank needs --world-size"),
    (["--world-size", "2", "--keep-steps", "0", "--", "train.py"], "keep_steps must be at least 1"),
])
def test_usage_errors_say_what_is_wrong(kit, tmp_path, args, message):
    script(tmp_path, "alloc(1)\n")
    r = kit(args, cwd=tmp_path)
    assert r.returncode == 2
    assert message in r.stderr, r.stderr


def test_without_torch_the_kit_says_it_needs_torch(kit, tmp_path):
    import importlib.util

    if importlib.util.find_spec("torch") is not None:
        pytest.skip("a real torch is installed here")
    script(tmp_path, "pass\n")
    r = kit(["--world-size", "2", "--", "train.py"], cwd=tmp_path, stub=False)
    assert r.returncode == 2 and "needs torch" in r.stderr, r.stderr
