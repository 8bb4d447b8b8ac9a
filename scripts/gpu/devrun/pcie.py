# Pinned host <-> device copies, 256 MiB each, queued on every GPU of a set at once: each GPU's rate
# (CUDA events) and the set's total (wall clock). H2D, D2H, and both directions at once.
import sys, time
import cupy as cp
n, reps = 256 << 20, int(sys.argv[1]) if len(sys.argv) > 1 else 24
rt = cp.cuda.runtime
gpus = rt.getDeviceCount()
res = []
for d in range(gpus):
    with cp.cuda.Device(d):
        res.append(dict(dev=cp.empty(n, dtype=cp.uint8), dev2=cp.empty(n, dtype=cp.uint8),
                        h=cp.cuda.alloc_pinned_memory(n), h2=cp.cuda.alloc_pinned_memory(n),
                        s1=cp.cuda.Stream(non_blocking=True), s2=cp.cuda.Stream(non_blocking=True)))
def run(devs, mode):
    marks = []
    t0 = time.perf_counter()
    for d in devs:
        r = res[d]
        with cp.cuda.Device(d):
            start, e1, e2 = cp.cuda.Event(), cp.cuda.Event(), cp.cuda.Event()
            start.record(r["s1"])
            r["s2"].wait_event(start)
            for _ in range(reps):
                if mode in ("h2d", "both"):
                    rt.memcpyAsync(r["dev"].data.ptr, r["h"].ptr, n, rt.memcpyHostToDevice, r["s1"].ptr)
                if mode in ("d2h", "both"):
                    rt.memcpyAsync(r["h2"].ptr, r["dev2"].data.ptr, n, rt.memcpyDeviceToHost, r["s2"].ptr)
            e1.record(r["s1"])
            e2.record(r["s2"])
            marks.append((d, start, e1, e2))
    for d, start, e1, e2 in marks:
        e1.synchronize()
        e2.synchronize()
    wall = time.perf_counter() - t0
    moved = n * reps * (2 if mode == "both" else 1)
    per = {d: moved / (max(cp.cuda.get_elapsed_time(s, e1), cp.cuda.get_elapsed_time(s, e2)) / 1e3) / 1e9
           for d, s, e1, e2 in marks}
    return per, moved * len(devs) / wall / 1e9
run([0], "h2d")  # warm-up
print("| GPUs at once | direction | each GPU's GB/s | total GB/s |\n|---|---|---|---:|")
sets = [[d] for d in range(gpus)] + [list(range(k)) for k in (2, 4, 8) if k <= gpus]
if gpus not in (1, 2, 4, 8):
    sets.append(list(range(gpus)))
for devs in sets:
    for mode in ("h2d", "d2h", "both"):
        per, total = run(devs, mode)
        print(f"| {','.join(map(str, devs))} | {mode}{' (each way)' if mode == 'both' else ''} | "
              f"{' / '.join(f'{per[d]:.1f}' for d in devs)} | {total:.1f} |", flush=True)
