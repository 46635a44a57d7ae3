#!/usr/bin/env python3
"""The fleet run: `hitch summarize` mapped over many traces on a Dask cluster, reduced with
`hitch merge`, the fleet's figures written to OUT (and, with --db, to the history store).

Run it through scripts/fleet.sh, which installs Dask into its own environment first:

    bash scripts/fleet.sh --local-workers 2 --traces 'runs/*.fxt' --out fleet/
    bash scripts/fleet.sh --scheduler tcp://scheduler.internal:8786 --prefix s3://bucket/traces/ --out fleet/ \\
        --db "$HITCH_DB" --commit "$(git rev-parse HEAD)"

The same job runs on one machine (--local-workers N: a local cluster of N worker processes) or on a
real cluster (--scheduler ADDRESS: every worker needs the same `hitch` at --hitch, and the traces at the
same paths, or an object-store prefix). Dask reruns the tasks of a worker that is lost; a trace that
cannot be read is reported (OUT/failures.json) and the run goes on. The job checks its own result:
every trace listed is either summarized once or reported, and the fleet's trace count and path digest
match the traces summarized (docs/FLEET.md "Checking a run"). Exit 0 when the fleet merged and checks
out, 1 when the check fails, 2 for bad usage or when nothing could be summarized.

Outputs in OUT: fleet.json (`hitch merge --format json`), fleet.html (the fleet page, the worst traces'
own reports under worst/), fleet.state.json (the fleet summary, to merge with later runs),
failures.json, run.json (counts, timings, traces per second per worker, load averages).
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

FNV_OFFSET, FNV_PRIME, MASK = 0xCBF29CE484222325, 0x100000001B3, (1 << 64) - 1


def path_hash(path):
    """64-bit FNV-1a of the path's UTF-8 bytes: the hash `hitch merge` sums into its path digest."""
    value = FNV_OFFSET
    for byte in path.encode("utf-8"):
        value = ((value ^ byte) * FNV_PRIME) & MASK
    return value


def path_digest(paths):
    return format(sum(path_hash(p) for p in paths) & MASK, "016x")


# Tasks: plain functions, pickled by value to the workers (which need Dask and `hitch`, not this file).

def _worker_name():
    try:
        from distributed import get_worker
        return str(get_worker().name)
    except Exception:
        return "local"


def _run(command, **options):
    """`command` without the environment Dask's nanny gives its Python worker: its
    MALLOC_TRIM_THRESHOLD_ (64 kB) makes glibc return memory after nearly every free, which cost
    hitch 3-25% more time here (measured side by side: the system time tripled)."""
    env = {key: value for key, value in os.environ.items() if key != "MALLOC_TRIM_THRESHOLD_"}
    return subprocess.run(command, capture_output=True, text=True, env=env, **options)


def _local_copy(url, directory):
    """A remote trace downloaded into `directory`; a local one as it is."""
    import fsspec
    protocol = url.split("://", 1)[0] if "://" in url else "file"
    if protocol in ("file", "local"):
        return url.split("://", 1)[1] if "://" in url else url
    os.makedirs(directory, exist_ok=True)
    target = os.path.join(directory, os.path.basename(url.rstrip("/")) or "trace")
    fsspec.filesystem(protocol).get(url, target)
    return target


def summarize_batch(paths, hitch, options, attempt_log, timeout):
    """One `hitch summarize` of the batch's traces (one summary a line on stdout, each named by its
    path or URL with --as): (path, summary text or None, error or None, seconds, worker) per trace."""
    import json as _json
    worker = _worker_name()
    start = time.monotonic()
    if attempt_log:
        with open(attempt_log, "a") as log:
            log.writelines(f"started\t{path}\t{worker}\n" for path in paths)
    errors, local = {}, {}
    with tempfile.TemporaryDirectory(prefix="hitch-fleet-") as scratch:
        for index, path in enumerate(paths):
            try:
                local[path] = _local_copy(path, os.path.join(scratch, str(index)) if "://" in path else scratch)
            except Exception as error:  # a download that failed: reported, the run goes on
                errors[path] = f"'{path}': {error}"
        todo = [p for p in paths if p in local]
        summaries, stderr = {}, ""
        if todo:
            command = [hitch, "summarize"] + [local[p] for p in todo] + [w for p in todo for w in ("--as", p)] + ["-o", "-"] + options
            try:
                done = _run(command, timeout=timeout * len(todo))
                stderr = done.stderr
                for line in done.stdout.splitlines():
                    if line.strip():
                        summaries[_json.loads(line)["path"]] = line + "\n"
            except subprocess.TimeoutExpired:
                stderr = f"hitch summarize took longer than {timeout} s a trace"
        lines = stderr.strip().splitlines()
        for path in todo:
            if path not in summaries:
                named = [line for line in lines if f"'{local[path]}'" in line or f"'{path}'" in line]
                errors[path] = named[0] if named else (f"'{path}': " + (lines[-1] if lines else "no summary"))
    took = (time.monotonic() - start) / max(1, len(paths))
    return [(path, summaries.get(path), errors.get(path), took, worker) for path in paths]


def merge_states(hitch, by, parts):
    """`hitch merge --format state` of summaries and partial merges (texts): one fleet summary text."""
    texts = [text for part in parts for text in (part if isinstance(part, list) else [part]) if text]
    with tempfile.TemporaryDirectory(prefix="hitch-merge-") as scratch:
        for index, text in enumerate(texts):
            with open(os.path.join(scratch, f"{index:06d}.json"), "w") as out:
                out.write(text)
        done = _run([hitch, "merge", scratch, "--format", "state", "-o", "-"] + by)
    if done.returncode != 0:
        raise RuntimeError(f"hitch merge failed: {done.stderr.strip()}")
    return done.stdout


def render(hitch, state, arguments):
    """`hitch merge STATE ARGUMENTS...` of the final fleet summary: its output text (and its stderr)."""
    with tempfile.TemporaryDirectory(prefix="hitch-final-") as scratch:
        path = os.path.join(scratch, "fleet.state.json")
        with open(path, "w") as out:
            out.write(state)
        done = _run([hitch, "merge", path, "-o", "-"] + arguments)
    if done.returncode != 0:
        raise RuntimeError(f"hitch merge {' '.join(arguments)} failed: {done.stderr.strip()}")
    return done.stdout, done.stderr


def report(hitch, path, title):
    """`hitch report` of one trace (downloaded first when remote): its HTML text."""
    with tempfile.TemporaryDirectory(prefix="hitch-report-") as scratch:
        local = _local_copy(path, scratch)
        done = _run([hitch, "report", local, "--title", title, "-o", "-"])
    return done.stdout if done.returncode == 0 else None


# The client side.

def list_traces(arguments):
    paths = []
    for pattern in arguments.traces:
        matched = sorted(glob.glob(pattern)) if any(c in pattern for c in "*?[") else [pattern]
        paths.extend(matched)
    if arguments.trace_list:
        with open(arguments.trace_list) as listing:
            paths.extend(line.strip() for line in listing if line.strip() and not line.startswith("#"))
    if arguments.prefix:
        import fsspec
        fs, root = fsspec.core.url_to_fs(arguments.prefix)
        protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
        found = sorted(fs.find(root))
        if protocol in ("file", "local"):
            paths.extend(found)
        else:
            paths.extend(f"{protocol}://{p}" for p in found)
    return paths


def load_averages():
    try:
        with open("/proc/loadavg") as f:
            return [float(x) for x in f.read().split()[:3]]
    except OSError:
        return None


def tree_reduce(client, hitch, by, futures, fan_in):
    """Partial merges of `fan_in` inputs each, level by level, until one fleet summary is left."""
    def merged(inputs):
        return [client.submit(merge_states, hitch, by, inputs[i:i + fan_in], pure=False) for i in range(0, len(inputs), fan_in)]
    level = merged(futures)
    while len(level) > 1:
        level = merged(level)
    return level[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="docs/FLEET.md describes the job, the summaries and the checks.")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--scheduler", help="a running cluster's scheduler address, e.g. tcp://10.0.0.5:8786")
    where.add_argument("--local-workers", type=int, help="start a local cluster of N worker processes (one thread each)")
    parser.add_argument("--traces", action="append", default=[], help="a trace path or glob (repeatable)")
    parser.add_argument("--trace-list", help="a file of trace paths or URLs, one a line")
    parser.add_argument("--prefix", help="every file under a directory or object-store prefix (fsspec URL: file://, s3://, gs://, http://...)")
    parser.add_argument("--out", required=True, help="the directory for fleet.json, fleet.html, fleet.state.json, failures.json, run.json")
    parser.add_argument("--hitch", default=shutil.which("hitch") or "hitch", help="the hitch binary, at this path on every worker")
    parser.add_argument("--by", action="append", default=[], help="a breakdown, e.g. appVersion,device (repeatable; hitch merge --by)")
    parser.add_argument("--refresh", help="refresh rates to judge at (hitch summarize --refresh)")
    parser.add_argument("--dimension", action="append", default=[], help="KEY=VALUE for every trace (hitch summarize --dimension)")
    parser.add_argument("--batch", type=int, default=4,
                        help="traces per task, one hitch process each (default 4: fewer process starts; a lost worker costs one batch's work)")
    parser.add_argument("--fan-in", type=int, default=32, help="summaries per partial merge (default 32)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds one trace may take (default 600)")
    parser.add_argument("--worst-reports", type=int, default=10, help="write the worst N traces' own reports beside the page (default 10)")
    parser.add_argument("--attempt-log", help="for checking a run: each task appends 'started PATH WORKER' here (a path every worker can write)")
    parser.add_argument("--db", help="also store the fleet's figures: SQLite path or postgres:// URL (hitch merge --db)")
    parser.add_argument("--commit", help="with --db: the commit the traces were recorded at")
    parser.add_argument("--branch", help="with --db: the branch (default fleet)")
    parser.add_argument("--machine", help="with --db: the run's machine name (default fleet)")
    parser.add_argument("--tag", action="append", default=[], help="with --db: key=value (repeatable)")
    arguments = parser.parse_args()
    if arguments.db and not arguments.commit:
        parser.error("--db needs --commit SHA")
    if arguments.batch < 1 or arguments.fan_in < 2:
        parser.error("--batch must be at least 1 and --fan-in at least 2")

    from distributed import Client, LocalCluster, as_completed

    paths = list_traces(arguments)
    if not paths:
        parser.error("no traces: give --traces, --trace-list or --prefix")
    if len(set(paths)) != len(paths):
        duplicate = next(p for p in paths if paths.count(p) > 1)
        parser.error(f"'{duplicate}' is listed twice: each trace counts once")
    os.makedirs(arguments.out, exist_ok=True)
    summarize_options = (["--refresh", arguments.refresh] if arguments.refresh else []) + \
        [word for pair in arguments.dimension for word in ("--dimension", pair)]
    by = [word for dims in arguments.by for word in ("--by", dims)]

    cluster = None
    if arguments.local_workers:
        cluster = LocalCluster(n_workers=arguments.local_workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, host="127.0.0.1")
        client = Client(cluster)
    else:
        client = Client(arguments.scheduler)
    try:
        workers = len(client.scheduler_info()["workers"])
        loads = {"start": load_averages()}
        started = time.monotonic()
        batches = [paths[i:i + arguments.batch] for i in range(0, len(paths), arguments.batch)]
        futures = [client.submit(summarize_batch, batch, arguments.hitch, summarize_options, arguments.attempt_log, arguments.timeout,
                                 pure=False) for batch in batches]
        batch_of = {future.key: batch for future, batch in zip(futures, batches)}
        summaries, failures, seconds, per_worker = {}, {}, 0.0, {}
        done_count, task_count = 0, len(futures)
        pending = as_completed(futures)
        del futures  # each result is released once read: a worker lost later costs only what it had not finished
        for future in pending:
            try:
                batch = future.result()
            except Exception as error:  # the task's workers died too often (KilledWorker): its traces are reported
                batch = [(path, None, f"'{path}': {type(error).__name__}: {error}", 0.0, "none") for path in batch_of[future.key]]
            future.release()
            for path, text, error, took, worker in batch:
                if path in summaries or path in failures:
                    raise SystemExit(f"fleet: '{path}' came back twice")
                if text is not None:
                    summaries[path] = text
                else:
                    failures[path] = error
                seconds += took
                per_worker[worker] = per_worker.get(worker, 0) + 1
            done_count += 1
            if done_count % max(1, task_count // 10) == 0 or done_count == task_count:
                print(f"fleet: {len(summaries) + len(failures)}/{len(paths)} traces summarized ({len(failures)} failed)", file=sys.stderr, flush=True)
        map_seconds = time.monotonic() - started
        loads["mapped"] = load_averages()
        for path, error in sorted(failures.items()):
            print(f"fleet: {error}", file=sys.stderr)
        if not summaries:
            print("fleet: no trace could be summarized", file=sys.stderr)
            return 2

        # Reduce on the workers: partial merges in a tree, then the figures from the final state.
        reduce_started = time.monotonic()
        scattered = client.scatter([summaries[p] for p in sorted(summaries)])
        state = tree_reduce(client, arguments.hitch, by, scattered, arguments.fan_in).result()
        figures_json, _ = client.submit(render, arguments.hitch, state, ["--format", "json"], pure=False).result()
        figures = json.loads(figures_json)
        worst = [t["path"] for t in figures["worstTraces"][:arguments.worst_reports]]
        reports = client.gather([client.submit(report, arguments.hitch, path, f"Worst #{rank + 1}: {os.path.basename(path)}", pure=False)
                                 for rank, path in enumerate(worst)])
        worst_dir = os.path.join(arguments.out, "worst")
        os.makedirs(worst_dir, exist_ok=True)
        written = 0  # the leading reports that were written: the page links those
        for rank, html in enumerate(reports):
            if html is None:
                break
            with open(os.path.join(worst_dir, f"worst-{rank + 1:03d}.html"), "w") as out:
                out.write(html)
            written += 1
        links = ["--worst-reports", "worst", "--worst-report-count", str(written)] if written else []
        html, _ = client.submit(render, arguments.hitch, state, ["--format", "html"] + links, pure=False).result()
        text, _ = client.submit(render, arguments.hitch, state, [], pure=False).result()
        stored = None
        if arguments.db:
            history = ["--format", "state", "--db", arguments.db, "--commit", arguments.commit] + \
                (["--branch", arguments.branch] if arguments.branch else []) + \
                (["--machine", arguments.machine] if arguments.machine else []) + \
                [word for tag in arguments.tag for word in ("--tag", tag)]
            _, stored = client.submit(render, arguments.hitch, state, history, pure=False).result()
        reduce_seconds = time.monotonic() - reduce_started
        loads["end"] = load_averages()

        for name, content in [("fleet.json", figures_json), ("fleet.html", html), ("fleet.state.json", state), ("fleet.txt", text)]:
            with open(os.path.join(arguments.out, name), "w") as out:
                out.write(content)
        with open(os.path.join(arguments.out, "failures.json"), "w") as out:
            json.dump([{"path": p, "error": e} for p, e in sorted(failures.items())], out, indent=2)

        # The check: every trace listed came back once, and the fleet holds exactly those summarized.
        expected_digest = path_digest(summaries)
        problems = []
        if len(summaries) + len(failures) != len(paths):
            problems.append(f"{len(paths)} traces listed, {len(summaries)} summarized and {len(failures)} failed")
        if figures["traces"] != len(summaries):
            problems.append(f"the fleet holds {figures['traces']} traces, {len(summaries)} were summarized")
        if figures["pathDigest"] != expected_digest:
            problems.append(f"the fleet's path digest is {figures['pathDigest']}, the summarized traces' {expected_digest}")
        run = {
            "traces": len(paths), "summarized": len(summaries), "failed": len(failures), "workers": workers,
            "tracesPerWorker": per_worker, "mapSeconds": round(map_seconds, 3), "reduceSeconds": round(reduce_seconds, 3),
            "tracesPerSecond": round(len(paths) / map_seconds, 3),
            "tracesPerSecondPerWorker": round(len(paths) / map_seconds / max(1, workers), 3),
            "summarizeSecondsSum": round(seconds, 3), "loadAverages": loads, "pathDigest": expected_digest,
            "checked": not problems, "problems": problems, "stored": stored.strip() if stored else None,
        }
        with open(os.path.join(arguments.out, "run.json"), "w") as out:
            json.dump(run, out, indent=2)
        print(text, end="")
        print(f"fleet: {len(summaries)} traces merged, {len(failures)} failed, {workers} workers, "
              f"{run['tracesPerSecond']} traces/s ({run['tracesPerSecondPerWorker']} per worker); {arguments.out}/fleet.html", file=sys.stderr)
        if stored:
            print(stored.strip(), file=sys.stderr)
        if problems:
            print("fleet: CHECK FAILED: " + "; ".join(problems), file=sys.stderr)
            return 1
        return 0
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    sys.exit(main())
