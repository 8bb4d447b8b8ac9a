# Host memory: numpy copies of 128 MiB by P processes at once; GB/s counts bytes read + written.
import multiprocessing as mp, sys, time
import numpy as np
def worker(barrier, q, reps):
    a = np.ones(128 << 20, dtype=np.uint8); b = np.empty_like(a); np.copyto(b, a)
    barrier.wait(); t = time.perf_counter()
    for _ in range(reps): np.copyto(b, a)
    q.put(time.perf_counter() - t)
if __name__ == "__main__":
    print("| processes | copy GB/s (read + write) |\n|---:|---:|")
    for p in [int(x) for x in sys.argv[1].split(",")]:
        reps = 8
        barrier, q = mp.Barrier(p), mp.Queue()
        procs = [mp.Process(target=worker, args=(barrier, q, reps)) for _ in range(p)]
        for x in procs: x.start()
        times = [q.get() for _ in procs]
        for x in procs: x.join()
        print(f"| {p} | {p * reps * 2 * (128 << 20) / max(times) / 1e9:.1f} |", flush=True)
