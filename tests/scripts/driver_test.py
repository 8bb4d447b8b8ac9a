"""scripts/gpu/driver.py without a GPU (--gpus 0), on a bundle of stand-in programs that print what the
real ones print: GPU parts are skipped with the reason, the CPU parts run and are summarised, time
limits stop a part and the budget the run, and the report says so. Standard library only (ctest)."""
import json
import os
import subprocess
import signal
import sys
import tarfile
import tempfile
import time
import textwrap
import unittest
from pathlib import Path

DRIVER = Path(__file__).resolve().parents[2] / "scripts/gpu/driver.py"

GTEST_PASS = """\
[==========] Running 4 tests from 2 test suites.
[ RUN      ] Exhaustive.EveryTwoByteSequence
[       OK ] Exhaustive.EveryTwoByteSequence (12 ms)
[ RUN      ] Exhaustive.EveryThreeByteSequence
[       OK ] Exhaustive.EveryThreeByteSequence (40 ms)
[ RUN      ] Random.Avx512
[  SKIPPED ] Random.Avx512 (0 ms)
[ RUN      ] Random.Portable
[       OK ] Random.Portable (3 ms)
[  PASSED  ] 3 tests.
[  SKIPPED ] 1 test, listed below:
[  SKIPPED ] Random.Avx512
"""
GTEST_FAIL = """\
[ RUN      ] Stream.Carry
[       OK ] Stream.Carry (1 ms)
[ RUN      ] Stream.Offsets
[  FAILED  ] Stream.Offsets (2 ms)
[  FAILED  ] 1 test, listed below:
[  FAILED  ] Stream.Offsets
"""


def program(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    path.chmod(0o755)


def bench_cpu_codec(path: Path, rate: float) -> None:
    """Writes Google Benchmark's JSON where --benchmark_out= says, as bench_cpu_codec does."""
    rows = [{"name": f"BM_gutf8_validate/{k}", "run_name": f"BM_gutf8_validate/{k}", "label": label,
             "aggregate_name": "median", "bytes_per_second": rate * 1e9 * (k + 1)}
            for k, label in enumerate(("mixed", "ascii"))]
    program(path, f"""\
        for a in "$@"; do case "$a" in --benchmark_out=*) out=${{a#--benchmark_out=}} ;; esac; done
        echo '{json.dumps({"benchmarks": rows})}' > "$out"
        """)


class DriverWithoutGpu(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        self.bundle = self.dir / "bundle"
        (self.bundle / "tests").mkdir(parents=True)
        (self.bundle / "COMMIT").write_text("abc1234\n")
        self.out = self.dir / "out"

    def tearDown(self):
        self.tmp.cleanup()

    def drive(self, *args, bundle=None, gpus="0"):
        p = subprocess.run([sys.executable, str(DRIVER), str(self.out), *args, "--gpus", gpus, "--bundle",
                            str(bundle or self.bundle), "--work", str(self.dir / "work")],
                           capture_output=True, text=True, timeout=120)
        results = json.loads((self.out / "results.json").read_text()) if (self.out / "results.json").exists() else {}
        return p, {r["part"]: r for r in results.get("parts", [])}

    def test_gpu_parts_skip_and_cpu_parts_run(self):
        program(self.bundle / "tests/gutf8_cpu_tests", f"cat <<'EOF'\n{GTEST_PASS}EOF\n")
        program(self.bundle / "tests/gutf8_gpu_tests", "exit 99\n")  # must not run without a GPU
        p, parts = self.drive("tests", "memcheck", "engine", "kernels")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        for gpu_part in ("gpu_tests", "prim_tests", "cli", "memcheck", "engine_tests", "kernel_tests",
                         "kernel_sanitizers", "kernel_fuzz", "codec_rounds", "validate_ncu", "gpu_tests_rest"):
            self.assertEqual(parts[gpu_part]["status"], "skip")
            self.assertEqual(parts[gpu_part]["summary"], "no GPU")
        self.assertEqual(parts["cpu_tests"]["status"], "pass")
        self.assertIn("3 passed, 0 failed, 1 skipped", parts["cpu_tests"]["summary"])
        self.assertEqual(parts["host_engine"]["status"], "skip")  # a CPU part: skipped only for want of gutf8
        self.assertIn("gutf8 not in the bundle", parts["host_engine"]["summary"])
        # The table comes last, and the report and logs are there.
        self.assertTrue(p.stdout.rstrip().endswith("|"), p.stdout)
        self.assertIn("| cpu_tests | pass |", p.stdout)
        self.assertIn("| cpu_tests | pass |", (self.out / "report.md").read_text())
        self.assertIn("Exhaustive.EveryTwoByteSequence", (self.out / "logs/cpu_tests.log").read_text())
        with tarfile.open(self.out / "logs.tar.gz") as t:
            self.assertIn("logs/cpu_tests.log", t.getnames())
        self.assertIn("no GPU", (self.out / "device.txt").read_text())

    def test_a_failing_suite_fails_the_run_and_names_the_test(self):
        program(self.bundle / "tests/gutf8_cpu_tests", f"cat <<'EOF'\n{GTEST_FAIL}EOF\nexit 1\n")
        p, parts = self.drive("cpu_tests")
        self.assertEqual(p.returncode, 1)
        self.assertEqual(parts["cpu_tests"]["status"], "fail")
        self.assertIn("1 passed, 1 failed", parts["cpu_tests"]["summary"])
        self.assertIn("Stream.Offsets", parts["cpu_tests"]["summary"])

    def test_missing_programs_are_skipped(self):
        p, parts = self.drive("cpu_tests", "cpu_codec", "pytest")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual({parts[n]["status"] for n in parts}, {"skip"})
        self.assertIn("not in the bundle", parts["cpu_tests"]["summary"])

    def test_time_limit_stops_a_part_and_the_budget_the_run(self):
        program(self.bundle / "tests/gutf8_cpu_tests", "echo '[       OK ] Slow.First (1 ms)'\nsleep 60\n")
        program(self.bundle / "bench/bench_cpu_codec", "exit 0\n")
        p, parts = self.drive("cpu_tests", "cpu_codec", "--budget", "18")
        self.assertEqual(p.returncode, 1)
        self.assertEqual(parts["cpu_tests"]["status"], "fail")
        self.assertIn("time limit", parts["cpu_tests"]["summary"])
        self.assertIn("1 passed", parts["cpu_tests"]["summary"])
        self.assertLess(parts["cpu_tests"]["seconds"], 40)
        self.assertEqual(parts["cpu_codec"]["status"], "skip")
        self.assertIn("budget", parts["cpu_codec"]["summary"])

    def test_ab_interleaves_the_bundles_and_gives_ratios(self):
        base = self.dir / "base"
        bench_cpu_codec(base / "bench/bench_cpu_codec", 2.0)
        bench_cpu_codec(self.bundle / "bench/bench_cpu_codec", 3.0)
        p, parts = self.drive("ab", "--base", str(base), "--ab", "cpu_codec,codec", "--rounds", "3")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(parts["ab"]["status"], "pass")
        table = (self.out / "ab.md").read_text()
        self.assertIn("cpu_codec: 3 rounds", table)
        self.assertNotIn("### codec", table)  # a GPU benchmark: left out without a GPU
        row = next(line for line in table.splitlines() if "BM_gutf8_validate/1" in line)
        self.assertIn("4.00 4.00 4.00 / **4.00** / 1.000", row)
        self.assertIn("6.00 6.00 6.00 / **6.00** / 1.500", row)
        steps = (self.out / "steps.txt").read_text().split()
        order = [s.rstrip(":") for s in steps if s.startswith("ab_cpu_codec")]
        self.assertEqual(order, ["ab_cpu_codec_b0_r1", "ab_cpu_codec_b1_r1", "ab_cpu_codec_b0_r2",
                                 "ab_cpu_codec_b1_r2", "ab_cpu_codec_b0_r3", "ab_cpu_codec_b1_r3"])

    def test_several_gpus_spread_the_suites(self):
        """mgpu_tests' plumbing with two pretended GPUs: 4 shards of the GPU suite with the GPUs rotated, and
        the CLI suite through a wrapper that adds --device, for each setting."""
        program(self.bundle / "gutf8", 'echo "$@"\n')
        program(self.bundle / "tests/gutf8_gpu_tests", """\
            echo "visible=$CUDA_VISIBLE_DEVICES"
            echo "[       OK ] Gpu.Shard$GTEST_SHARD_INDEX (1 ms)"
            """)
        program(self.bundle / "tests/gutf8_cli_tests", """\
            case "$("$GUTF8_BIN" validate f)" in
              "validate --device "*" f") echo "[       OK ] Cli.DeviceAdded$GTEST_SHARD_INDEX (1 ms)" ;;
              *) echo "[  FAILED  ] Cli.DeviceAdded$GTEST_SHARD_INDEX (1 ms)"; exit 1 ;;
            esac
            """)
        p, parts = self.drive("mgpu_tests", "--cli-shards", "2", gpus="2")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        table = parts["mgpu_tests"]["details"]
        for row in ("| gutf8_gpu_tests (GPUs rotated per shard) |", "| CLI, cuda, --device all |",
                    "| CLI, cuda, --device 0 |", "| CLI, cuda, --device 1 |"):
            self.assertIn(row, table)
        self.assertEqual(table.count("| 0 | 0 |"), 4, table)  # no failure, no skip on any row
        self.assertIn("| 4 |", table.splitlines()[2])  # the GPU suite: 4 shards passed
        self.assertIn("visible=1,0", (self.out / "logs/gpu_tests_1.log").read_text())

    def test_host_engine_runs_the_cases_it_has_tools_for(self):
        """bench/host_engine.py itself, on a stand-in gutf8 and a 1 MiB file: the pipe case's rows, and
        the Python case left out (no wheel carried) with the reason."""
        program(self.bundle / "gutf8", "cat > /dev/null\n")
        p, parts = self.drive("host_engine", "--engine-cases", "pipe,python", "--engine-sizes", "1M", "--reps", "1")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(parts["host_engine"]["status"], "pass", parts["host_engine"])
        self.assertIn("left out: python (no wheel", parts["host_engine"]["summary"])
        rows = (self.out / "host_engine.csv").read_text().splitlines()
        self.assertTrue(rows[0].startswith("case,tool,input,threads,median_s"), rows)
        self.assertEqual([r.split(",")[1] for r in rows[1:]], ["cat | wc -c", "cat | gutf8 validate"])
        self.assertTrue(all(r.split(",")[7] == "abc1234" for r in rows[1:]), rows)  # the bundle's commit

    def test_kernels_on_a_pretended_gpu(self):
        """The kernels group's plumbing with one pretended GPU: each part runs its stand-in, the fuzzer's time
        limit passes, and codec_rounds tables the median of its rounds against the targets."""
        tools = self.dir / "tools"
        program(tools / "compute-sanitizer", 'echo "[       OK ] GpuSanitizerSweep.Every (1 ms)"\n'
                                             'echo "========= ERROR SUMMARY: 0 errors"\n')
        program(tools / "ncu", "echo '\"ID\",\"smsp__inst_executed.sum\"'; echo '\"\",\"inst\"'; "
                               "echo '\"0\",\"65536\"'\n")
        program(self.bundle / "tests/gutf8_gpu_tests", 'echo "args: $*"; echo "[       OK ] Gpu.One (1 ms)"\n')
        program(self.bundle / "tests/gutf8_gpu_fuzz", "echo 'gutf8_gpu_fuzz: 5 inputs'; sleep 60\n")
        rounds = self.dir / "rounds"
        rounds.mkdir()
        (rounds / "n").write_text("0")
        header = "gpu,commit,date,size_mib,copy_gbps,input,invalid_pct,op,median_ms,gbps,roofline_gbps,fraction,read_gbps"
        program(self.bundle / "bench/bench_codec", f"""\
            n=$(cat {rounds}/n); n=$((n + 1)); echo $n > {rounds}/n
            while [ "$1" != --out ]; do shift; done; mkdir -p "$2"
            {{ echo '{header}'
              echo "H,c,d,256,4000,ascii,0.0,validate,0.1,300$n,4400,0.9$n,4400"
              echo "H,c,d,256,4000,ascii,0.0,validate_planes,0.1,2000,4400,0.5,4400"
              echo "H,c,d,256,4000,cjk,1.0,repair_replace,0.1,900,2000,0.6$n,4400"; }} > "$2/codec.csv"
            """)
        env_path = f"{tools}:{os.environ['PATH']}"
        p = subprocess.run([sys.executable, str(DRIVER), str(self.out), "kernels", "--gpus", "1", "--bundle",
                            str(self.bundle), "--work", str(self.dir / "work"), "--budget", "300"],
                           capture_output=True, text=True, timeout=200, env=dict(os.environ, PATH=env_path))
        parts = {r["part"]: r for r in json.loads((self.out / "results.json").read_text())["parts"]}
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("1 passed", parts["kernel_tests"]["summary"])
        self.assertIn("--gtest_filter=GpuRandom.*", (self.out / "logs/kernel_tests.log").read_text())
        self.assertIn("--gtest_filter=*-GpuRandom.*", (self.out / "logs/gpu_tests_rest.log").read_text())
        self.assertIn("memcheck 0, racecheck 0", parts["kernel_sanitizers"]["summary"])
        self.assertIn("stopped at its time limit", parts["kernel_fuzz"]["summary"])
        self.assertLess(parts["kernel_fuzz"]["seconds"], 50)
        self.assertEqual(parts["codec_rounds"]["status"], "pass")
        table = (self.out / "codec_rounds.txt").read_text()
        self.assertIn("3 rounds; copy 4000, 4000, 4000 GB/s", table)
        ascii_row = next(line for line in table.splitlines() if line.startswith("validate ") and "0.0" in line)
        self.assertIn("92%*", ascii_row)  # the median of 0.91, 0.92, 0.93 meets the ASCII target 0.90
        repair_row = next(line for line in table.splitlines() if line.startswith("repair_replace"))
        self.assertIn("62%", repair_row)
        self.assertNotIn("62%*", repair_row)  # 0.62 < the target 0.65 at 1 %
        self.assertIn("3002 1.50", table)  # validate against the former walk in the same rounds
        self.assertEqual(sorted(f.name for f in self.out.glob("codec_r*.csv")), ["codec_r1.csv", "codec_r2.csv", "codec_r3.csv"])
        self.assertIn("6 of 6 profiles", parts["validate_ncu"]["summary"])
        self.assertTrue((self.out / "ncu.csv").read_text().startswith("op,input,invalid,warp_inst_per_KiB"))
        self.assertEqual(parts["gpu_tests_rest"]["status"], "pass")

    def test_a_stopped_run_still_reports(self):
        program(self.bundle / "tests/gutf8_cpu_tests", "echo '[       OK ] Slow.First (1 ms)'\nsleep 60\n")
        d = subprocess.Popen([sys.executable, str(DRIVER), str(self.out), "cpu_tests", "cpu_codec", "--gpus", "0",
                              "--bundle", str(self.bundle)], stdout=subprocess.PIPE, text=True)
        while not (self.out / "logs/cpu_tests.log").exists() or "Slow.First" not in (self.out / "logs/cpu_tests.log").read_text():
            time.sleep(0.2)
        d.send_signal(signal.SIGTERM)
        out, _ = d.communicate(timeout=60)
        self.assertEqual(d.returncode, 1)
        self.assertIn("| cpu_tests | fail | 0 | stopped by a signal; not run: cpu_codec |", out)
        self.assertIn("not run: cpu_codec", (self.out / "report.md").read_text())

    def test_unknown_part_is_refused_before_anything_runs(self):
        p, parts = self.drive("cpu_tests", "no_such_part")
        self.assertEqual(p.returncode, 2)
        self.assertIn("no_such_part", p.stderr)
        self.assertFalse(self.out.exists())

    def test_list_names_every_group(self):
        p = subprocess.run([sys.executable, str(DRIVER), "--list"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0)
        for g in ("tests", "reliability", "bench", "files", "engine", "kernels", "multi_gpu"):
            self.assertIn(f"group {g}:", p.stdout)


if __name__ == "__main__":
    unittest.main()
