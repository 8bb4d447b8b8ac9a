"""What every part of a device run uses: the run's context (budget, bundle, GPUs, logs), steps run
under a time limit, GoogleTest and compute-sanitizer log summaries, medians, and the part registry."""
from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parents[3]  # the repository root


@dataclass
class Outcome:
    """What a part reports: pass, fail or skip, in one line for the table, and optional details."""
    part: str
    status: str
    summary: str
    seconds: float = 0.0
    details: str = ""


@dataclass
class Step:
    """One command run by Context.run."""
    name: str
    rc: int
    seconds: float
    log: Path
    timed_out: bool

    @property
    def ok(self) -> bool:
        return self.rc == 0

    def text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""


@dataclass
class Part:
    name: str
    run: Callable[["Context"], Outcome]
    cap: float       # seconds it may take at most
    gpu: bool        # needs a GPU (skipped without one)
    help: str
    needs: tuple     # programs of the bundle it runs (skipped without them)
    tools: tuple     # programs of the system it runs (skipped without them)


PARTS: dict[str, Part] = {}
GROUPS: dict[str, list[str]] = {}


def part(name: str, cap: float, gpu: bool = True, help: str = "", needs: tuple = (), tools: tuple = ()):
    """Registers a part: a function of the context that returns an Outcome."""
    def register(fn):
        PARTS[name] = Part(name, fn, cap, gpu, help or (fn.__doc__ or "").strip().splitlines()[0], needs, tools)
        return fn
    return register


def group(name: str, members: list[str]) -> None:
    GROUPS[name] = members


@dataclass
class Context:
    out: Path
    bundle: Path
    budget: float
    gpus: int
    options: dict = field(default_factory=dict)
    t0: float = field(default_factory=time.monotonic)
    part_end: float = float("inf")  # the deadline of the part that runs

    @property
    def logs(self) -> Path:
        return self.out / "logs"

    def left(self) -> float:
        """Seconds left of the whole run's budget."""
        return self.budget - (time.monotonic() - self.t0)

    def limit(self, cap: float) -> float:
        """A step's time limit: cap, within the part's deadline and the run's budget."""
        return max(1.0, min(cap, self.part_end - time.monotonic(), self.left()))

    def note(self, message: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')} +{time.monotonic() - self.t0:.0f}s] {message}"
        print(line, flush=True)
        with open(self.out / "progress.log", "a") as f:
            f.write(line + "\n")

    def path(self, relative: str) -> Optional[Path]:
        """A program of the bundle (tests/X, bench/X, gutf8), or None when it is not there."""
        p = self.bundle / relative
        return p if p.is_file() and os.access(p, os.X_OK) else None

    def tool(self, name: str) -> Optional[str]:
        """A program on PATH or in the CUDA toolkit (compute-sanitizer, ncu, nsys)."""
        return shutil.which(name) or shutil.which(name, path="/usr/local/cuda/bin")

    def run(self, name: str, cmd: list, cap: float, env: Optional[dict] = None, cwd: Optional[Path] = None,
            stdout: Optional[Path] = None) -> Step:
        """Runs cmd under a time limit (SIGINT, then SIGKILL 10 s later); its output goes to logs/NAME.log
        (or stdout to the given file and stderr to the log)."""
        self.logs.mkdir(parents=True, exist_ok=True)
        log = self.logs / f"{name}.log"
        limit = self.limit(cap)
        full_env = dict(os.environ, **(env or {}))
        start = time.monotonic()
        with open(log, "w") as err, open(stdout, "w") if stdout else open(os.devnull, "w") as out:
            try:
                p = subprocess.Popen([str(c) for c in cmd], stdout=out if stdout else err, stderr=err,
                                     env=full_env, cwd=cwd or ROOT, start_new_session=True)
            except OSError as e:
                err.write(f"cannot run {cmd[0]}: {e}\n")
                return Step(name, 127, 0.0, log, False)
            timed_out = False
            try:
                rc = p.wait(timeout=limit)
            except KeyboardInterrupt:  # the driver is stopped: so is the command
                os.killpg(p.pid, 9)
                p.wait()
                raise
            except subprocess.TimeoutExpired:
                timed_out = True
                os.killpg(p.pid, 2)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, 9)
                    p.wait()
                rc = 124
        seconds = time.monotonic() - start
        with open(self.out / "steps.txt", "a") as f:
            f.write(f"{name}: rc={rc} in {seconds:.0f} s{' (time limit)' if timed_out else ''}\n")
        return Step(name, rc, seconds, log, timed_out)


# ------------------------------------------------------------------------ log summaries ----

@dataclass
class TestCounts:
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    failures: list = field(default_factory=list)

    def line(self) -> str:
        s = f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped"
        if self.failures:
            s += ": " + " ".join(self.failures[:6]) + (" ..." if len(self.failures) > 6 else "")
        return s

    def add(self, other: "TestCounts") -> None:
        self.passed += other.passed
        self.failed += other.failed
        self.skipped += other.skipped
        self.failures += other.failures


def gtest_counts(text: str) -> TestCounts:
    """Per test, not the final summary: a run stopped at its limit still counts what ran."""
    c = TestCounts()
    c.passed = len(re.findall(r"^\[       OK \] [A-Za-z]", text, re.M))
    c.skipped = len(set(re.findall(r"^\[  SKIPPED \] ([A-Za-z][^ ]*) \(", text, re.M)))
    c.failures = sorted(set(re.findall(r"^\[  FAILED  \] ([A-Za-z][^ ]*) \(\d+ ms\)", text, re.M)))
    c.failed = len(c.failures)
    return c


def sanitizer_errors(text: str) -> Optional[int]:
    """compute-sanitizer's error count; racecheck's hazards (errors and warnings) count too."""
    m = re.findall(r"ERROR SUMMARY: (\d+) error", text)
    if m:
        return int(m[-1])
    m = re.findall(r"RACECHECK SUMMARY: .*\((\d+) errors, (\d+) warnings\)", text)
    if m:
        return int(m[-1][0]) + int(m[-1][1])
    return None


def median(values: list) -> Optional[float]:
    return statistics.median(values) if values else None


def tail(path: Path, lines: int = 12) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def markdown_table(header: list, rows: list) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def write_json(path: Path, data) -> None:
    path.write_text(json.dumps(data, indent=1) + "\n")
