#!/usr/bin/env python3
"""Random 4 KiB reads per second of this machine's disk against the number of reads in flight.

Each thread reads random 4 KiB pages of FILE with O_DIRECT (no page cache) for SECONDS; the
table says what the device gives at 1, 2, 4, … reads in flight: the ceiling a cold prefetch
works against. Python's own overhead caps it near ~40k reads/s, above what this VM's disk gives.

    dd if=/dev/zero of=/tmp/iotest.bin bs=1M count=2048 oflag=direct
    scripts/disk-iops.py /tmp/iotest.bin [SECONDS]
"""
import mmap, os, random, sys, threading, time

if len(sys.argv) < 2:
    sys.exit(__doc__)
path = sys.argv[1]
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 4.0
try:
    pages = os.path.getsize(path) // 4096
except OSError as e:
    sys.exit(f"{path}: cannot read: {e.strerror}")
if pages < 1024:
    sys.exit(f"{path}: at least 4 MiB are needed (a few GiB keep the reads off any cache)")


def worker(stop, counts, idx):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, 4096)  # page-aligned, as O_DIRECT needs
    rng = random.Random(idx)
    n = 0
    while not stop[0]:
        os.preadv(fd, [buf], rng.randrange(pages) * 4096)
        n += 1
    counts[idx] = n
    os.close(fd)


print("| reads in flight (threads) | reads/s (4 KiB random, O_DIRECT) | MiB/s | mean latency µs |")
print("|---|---|---|---|")
for threads in [1, 2, 4, 8, 16, 32, 64]:
    stop, counts = [False], [0] * threads
    pool = [threading.Thread(target=worker, args=(stop, counts, i)) for i in range(threads)]
    start = time.time()
    for t in pool:
        t.start()
    time.sleep(seconds)
    stop[0] = True
    for t in pool:
        t.join()
    rate = sum(counts) / (time.time() - start)
    print(f"| {threads} | {rate:,.0f} | {rate * 4096 / 2**20:.1f} | {threads / rate * 1e6:.0f} |", flush=True)
