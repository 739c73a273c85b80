"""The ``airtcp`` command line."""

from __future__ import annotations

import argparse
import fcntl
import os
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from . import backend as be
from . import experiment as ex
from . import kernels, kmod, netns, report, runner
from . import plot as plots
from . import result as res
from .checkout import meant_checkout
from .dynamics import timeloss_attach
from .errors import AirtcpError, ConfigError
from .paths import EXPERIMENT_DIR, REPO_ROOT, RESULTS_DIR, TESTBED_DIR
from .profile import DIRECTIONS, Profile, available_profiles, load_profile, parse_assignment
from .scheme import available_schemes, available_senders, load_scheme, load_sender
from .tomlfile import available
from .topology import Endpoint, plan_links
from .units import parse_duration
from .version import VERSION_ENV, version
from .wifi import medium_argv
from .workload import available_workloads, load_workload


def _add_backend_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("backend")
    group.add_argument(
        "--backend",
        default="auto",
        choices=("auto", "native", "vm"),
        help="where to run: this host (native) or Debian's kernel under QEMU (vm); auto picks and says why",
    )
    group.add_argument(
        "--vm-kernel",
        metavar="KERNEL",
        help=f"kernel the VM boots: a series ({', '.join(kernels.SERIES)}: its newest release) or an exact release"
        f" (default: the newest {kernels.DEFAULT_SERIES}; `airtcp kernels list`); 'debug' for `make debug-kernel`'s",
    )
    group.add_argument("--vm-cpus", type=int, default=2, metavar="N", help="virtual CPUs of the VM (default 2)")
    group.add_argument("--vm-memory", default="2G", metavar="SIZE", help="memory of the VM (default 2G)")


def _vm_options(args: argparse.Namespace) -> be.VmOptions:
    return be.VmOptions(kernel=args.vm_kernel, cpus=args.vm_cpus, memory=args.vm_memory)


def _choose(args: argparse.Namespace) -> be.Choice:
    choice = be.choose(args.backend, be.probe_host())
    if be.in_guest():
        return be.Choice("vm", os.environ.get("AIRTCP_BACKEND_REASON", "inside the airtcp VM"), guest=True)
    print(f"airtcp: backend {choice.backend}: {choice.reason}", flush=True)
    return choice


def _kernel_release(choice: be.Choice, args: argparse.Namespace) -> str:
    if choice.boots_vm:
        return be.find_vm_kernel(args.vm_kernel).release
    return os.uname().release


def _kernel_build_dir(choice: be.Choice, args: argparse.Namespace) -> str:
    if choice.boots_vm:
        return str(be.find_vm_kernel(args.vm_kernel).build_dir)
    return f"/lib/modules/{os.uname().release}/build"


BUILD_LOCK = REPO_ROOT / ".build.lock"


def _build(choice: be.Choice, args: argparse.Namespace) -> None:
    """Build daemons and modules for exactly the kernel that will run them."""
    if choice.guest:
        return  # built on the host before the VM booted; the guest only runs
    release, kdir = _kernel_release(choice, args), _kernel_build_dir(choice, args)
    # Two runs started from one checkout would otherwise both write the
    # same objects; the second waits, then finds everything up to date.
    with open(BUILD_LOCK, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(
            ["make", "-s", "-C", str(REPO_ROOT), "build", f"KVER={release}", f"KDIR={kdir}"], check=False
        )
    if done.returncode != 0:
        raise AirtcpError(f"build for kernel {release} failed (make build KVER={release}); see the output above")


FORWARDED_ENV = ("AIRTCP_PEPD", "AIRTCP_ARQD", "AIRTCP_DEBS", "ASAN_OPTIONS", "UBSAN_OPTIONS")


def _in_guest(args: argparse.Namespace, choice: be.Choice, command: list[str], rwdirs: Sequence[Path] = ()) -> int:
    from .metadata import GIT_ENV, git_describe

    env = {
        "AIRTCP_BACKEND_REASON": choice.reason,
        GIT_ENV: git_describe(),
        VERSION_ENV: version(),  # the guest need not run git
        "PYTHONUNBUFFERED": "1",
        # The guest's /tmp is the host's over 9p when --out points there, and
        # 9p takes no Unix sockets (pepd's control socket) nor iperf3's
        # unlinked temporary files; /dev/shm is the guest's own tmpfs.
        "TMPDIR": "/dev/shm",
        # the guest runs the same checkout's code as this process, whatever the venv's editable install says
        "AIRTCP_ROOT": str(REPO_ROOT),
        # ... ahead of what the user's PYTHONPATH adds
        "PYTHONPATH": os.pathsep.join(p for p in (str(TESTBED_DIR), os.environ.get("PYTHONPATH")) if p),
    }
    # other daemon builds (the sanitizer build), and what the sanitizers are told, reach the guest too
    env.update({k: os.environ[k] for k in FORWARDED_ENV if os.environ.get(k)})
    return be.run_in_vm(command, rwdirs=rwdirs, env=env, opts=_vm_options(args))


# ---------------------------------------------------------------- run


def _default_out(name: str) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return RESULTS_DIR / f"{name}-{stamp}.json"


def cmd_run(args: argparse.Namespace) -> int:
    overrides = ex.Overrides(
        profile=args.profile,
        sets=args.set,
        sweeps=args.sweep,
        schemes=[s for s in args.scheme.split(",") if s] if args.scheme else None,
        senders=[s for s in args.sender.split(",") if s] if args.sender else None,
        duration=args.duration,
        runs=args.runs,
        ipv6=True if args.ipv6 else None,
        capture=True if args.capture else None,
        rtt_probe=args.rtt_probe,
        workloads=[w for w in args.workload.split(",") if w] if args.workload else None,
    )
    # Validate every input before booting anything.
    exp = ex.load_experiment(args.experiment, overrides)
    formats = _plot_formats(args)
    labels = list(dict.fromkeys(f"{s.name}/{t.name}" for w in exp.all_workloads() for s, t in exp.cases_for(w)))
    if args.baseline is not None and args.baseline not in labels:
        raise ConfigError(
            "--baseline", "baseline", args.baseline, f"not a case of this run; cases: {', '.join(labels)}"
        )
    out = Path(args.out).resolve() if args.out else _default_out(exp.name)
    if out.suffix != ".json":
        out = out / _default_out(exp.name).name
    choice = _choose(args)
    release = _kernel_release(choice, args)
    kernel_ccs = kmod.kernel_congestion_controls(release)
    if kernel_ccs is not None:
        ex.check_congestion_controls(exp, kernel_ccs, release, flag_senders=args.sender is not None)
    _build(choice, args)
    if not choice.guest:
        print(
            f"airtcp: experiment {exp.name}: {len(exp.planned())} case(s) x {exp.runs} run(s) of "
            + ", ".join(f"{w.name} ({exp.duration_for(w):g} s)" for w in exp.all_workloads())
            + f" over profile {exp.profile.name} -> {out}",
            flush=True,
        )
    if choice.boots_vm:
        guest = [
            be.guest_python(),
            "-m",
            "airtcp",
            *sys.argv[1:],
            "--backend",
            "native",
            "--out",
            str(out),
            "--no-report",
        ]
        try:
            status = _in_guest(args, choice, guest, [out.parent])
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the VM was killed, its runner could not say so
            res.mark_interrupted(out)
            return _interrupted(out)
    else:
        netns.require_root("the native backend")
        status = _run_native(exp, out, choice)
    # After Ctrl-C the user wants to stop, not to wait for a plot.
    if status != 130 and not args.no_report and out.exists():
        _report([out], args.baseline, formats=[] if args.no_plot else formats)
    return status


def _run_native(exp: ex.Experiment, out: Path, choice: be.Choice) -> int:
    try:
        doc = runner.run_experiment(exp, out, choice.backend, choice.reason)
    except KeyboardInterrupt:
        return _interrupted(out)
    failed = sum(1 for case in doc["cases"] for run in case["runs"] if run.get("error"))
    if failed:
        print(f"airtcp: {failed} run(s) failed; their errors are in {out}", file=sys.stderr)
        return 1
    return 0


def _interrupted(out: Path) -> int:
    if out.exists():
        print(f"airtcp: interrupted; finished runs are saved in {out} (airtcp report {out})", file=sys.stderr)
    else:
        print("airtcp: interrupted before the first run was saved", file=sys.stderr)
    return 130


def _plot_formats(args: argparse.Namespace) -> list[str]:
    try:
        return plots.parse_formats(args.plot_format)
    except ValueError as exc:
        raise ConfigError("--plot-format", "format", args.plot_format, str(exc)) from None


def _report(paths: Sequence[Path], baseline: str | None, formats: Sequence[str], csv_out: str | None = None) -> None:
    """Tables (one per profile and workload, merged over the files), verdicts, plot and CSV."""
    docs = [res.load(path) for path in paths]
    # x.json.gz reads as x.json: its batch is "x", its plot x.png
    paths = [path.with_suffix("") if path.suffix == ".gz" else path for path in paths]
    batch_list = report.batches([p.stem for p in paths], docs)
    report.check_baseline(batch_list, baseline)
    for path, doc in zip(paths, docs, strict=True):
        print()
        print((f"{path.stem}: " if len(paths) > 1 else "") + report.describe(doc))
    print()
    print(report.merged_table(batch_list, baseline))
    lines = report.verdict_lines(batch_list)
    if lines:
        print()
        print(lines)
    print()
    for path in paths:
        print(f"result file: {path}")
    if formats:
        first = paths[0]
        target = first if len(paths) == 1 else first.with_name(f"{first.stem}-merged.json")
        for written in plots.plot_batches(batch_list, target, formats):
            print(f"plot:        {written}")
    if csv_out is not None:
        text = report.csv_text(batch_list)
        if csv_out == "-":
            sys.stdout.write(text)
        else:
            Path(csv_out).write_text(text)
            print(f"csv:         {csv_out}")


def cmd_report(args: argparse.Namespace) -> int:
    formats = [] if args.no_plot else _plot_formats(args)
    _report([Path(name) for name in args.files], args.baseline, formats, args.csv)
    return 0


def cmd_recovery(args: argparse.Namespace) -> int:
    """Recompute every run's recovery summary from its kept capture."""
    from . import recovery

    path = Path(args.file)
    doc = res.load(path)
    done = missing = 0
    for case in doc["cases"]:
        for run in case["runs"]:
            old = run.get("recovery")
            if not isinstance(old, dict) or not old.get("capture_file"):
                continue
            capture = Path(old["capture_file"])
            if not capture.is_absolute():
                capture = path.parent / capture
            try:
                data = capture.read_bytes()
            except OSError as exc:
                print(f"airtcp: {capture}: {exc}", file=sys.stderr)
                missing += 1
                continue
            new = recovery.analyse(data)
            new.update(
                kernel_drops=old.get("kernel_drops"),
                not_written=old.get("not_written"),
                capture_bytes=len(data),
                capture_file=old["capture_file"],
            )
            run["recovery"] = new
            done += 1
    res.save(doc, path)
    print(f"airtcp: {done} run(s) re-analysed in {path}" + (f", {missing} capture(s) missing" if missing else ""))
    return 1 if missing else 0


# ---------------------------------------------------------------- others


def cmd_clean(args: argparse.Namespace) -> int:
    netns.require_root("airtcp clean")
    netns.clean(force=args.force)
    return 0


def cmd_backend(args: argparse.Namespace) -> int:
    choice = be.choose(args.backend, be.probe_host())
    if args.kernel_release:
        print(_kernel_release(choice, args))
    elif args.kernel_build_dir:
        print(_kernel_build_dir(choice, args))
    else:
        print(f"{choice.backend}: {choice.reason}")
    return 0


def cmd_kernels(args: argparse.Namespace) -> int:
    return kernels.main(args.kernels_args)


def cmd_exec(args: argparse.Namespace) -> int:
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise AirtcpError("airtcp exec: no command given (airtcp exec -- CMD ...)")
    choice = _choose(args)
    _build(choice, args)
    if choice.boots_vm:
        return _in_guest(args, choice, command)
    return subprocess.run(command, check=False).returncode


def cmd_profiles(args: argparse.Namespace) -> int:
    for name in available_profiles():
        print(f"{name:32} {load_profile(name).description}")
    return 0


def cmd_profile_show(args: argparse.Namespace) -> int:
    profile = load_profile(args.name, [parse_assignment(a, "--set") for a in args.set])
    horizon = parse_duration("--duration", "duration", args.duration, allow_zero=False)
    print(f"# {profile.label}: {profile.description}")
    for link in plan_links(profile):
        wifi = profile.links[link.name].wifi
        if wifi is not None:
            medium = medium_argv(
                wifi,
                [("airtcp-PID-bs", link.left.mac), ("airtcp-PID-wh", link.right.mac)],
                {d: profile.links[link.name].direction(d).loss for d in DIRECTIONS},
                {d: profile.links[link.name].direction(d).limit_packets for d in DIRECTIONS},
                Path("STATS"),
            )
            medium[0] = Path(medium[0]).name
            print(f"[{link.left.role}] {' '.join(medium)}    # {link.name}: wifi, 802.11{wifi.standard}, "
                  f"channel {wifi.channel}, {wifi.security}, {wifi.ap_mode}")  # fmt: skip
        for direction in DIRECTIONS:
            end = link.egress(direction)
            spec = profile.links[link.name].direction(direction)
            comment = f"# {link.name} {direction}, {spec.scheduler}, loss {spec.loss.loss_rate():.4g}"
            for argv in spec.tc_commands(end.dev):
                print(f"[{end.role}] tc {' '.join(argv)}" + (f"    {comment}" if comment else ""))
                comment = ""
            if spec.timeloss_args():
                receiver, attach_args = timeloss_attach(link, direction, spec, "T0")
                argv = ["airtcp-timeloss", *attach_args]
                print(f"[{receiver.role}] {' '.join(argv)}    # time-driven loss from the transfer's start")
    for link_name, event in profile.events(horizon):
        end = profile_link_end(profile, link_name, event.direction)
        argv = ["tc", "qdisc", "change", "dev", end.dev, "root", "netem", *event.state.netem_args()]
        print(f"[{end.role}] at T0+{event.at_s:g}s: {' '.join(argv)}    # {link_name} {event.direction}")
    return 0


def profile_link_end(profile: Profile, link_name: str, direction: str) -> Endpoint:
    for link in plan_links(profile):
        if link.name == link_name:
            return link.egress(direction)
    raise AirtcpError(f"profile {profile.name} has no link {link_name}")


def cmd_list(kind: str) -> int:
    if kind == "schemes":
        for name in available_schemes():
            scheme = load_scheme(name)
            print(f"{name:24} {scheme.description} (senders: {', '.join(scheme.senders)})")
    elif kind == "senders":
        for name in available_senders():
            print(f"{name:24} {load_sender(name).description}")
    elif kind == "workloads":
        for name in available_workloads():
            print(f"{name:24} {load_workload(name).description}")
    else:
        for name in available(EXPERIMENT_DIR):
            print(f"{name:24} {ex.load_experiment(name).description}")
    return 0


class _PrintVersion(argparse.Action):
    """--version, asked of git only when given (argparse's own action wants the text up front)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=str(kwargs.get("help", "")))

    def __call__(self, parser: argparse.ArgumentParser, *_args: object, **_kwargs: object) -> None:
        print(f"airtcp {version()}")
        parser.exit()


PLOT_FORMAT_HELP = "comma-separated: png (default), svg, pdf; one plot file each, beside the result file"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="airtcp",
        description="TCP over lossy wireless links: namespace testbeds, link profiles, schemes, results.",
    )
    parser.add_argument("--version", action=_PrintVersion, help="print the version (scripts/version.sh) and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    run = sub.add_parser("run", help="run an experiment and report it")
    run.add_argument("--experiment", default="default", help="experiment name or .toml file (default: default)")
    run.add_argument("--profile", help="link profile name or .toml file (overrides the experiment's)")
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change one profile key, e.g. links.wireless.delay=1ms (repeatable)",
    )
    run.add_argument(
        "--sweep",
        action="append",
        default=[],
        metavar="KEY=V1,V2",
        help="run every case over each value of a profile key (repeatable: all combinations)",
    )
    run.add_argument("--scheme", help="comma-separated schemes (default: the experiment's)")
    run.add_argument("--sender", help="comma-separated senders (default: each scheme's own list)")
    run.add_argument(
        "--workload", help="comma-separated workloads (testbed/workloads/; default: the experiment's, else bulk)"
    )
    run.add_argument("--duration", help="transfer length with unit, e.g. 20s")
    run.add_argument("--runs", type=int, help="runs per case (median and confidence interval over them)")
    run.add_argument("--ipv6", action="store_true", help="transfer over IPv6 instead of IPv4")
    run.add_argument(
        "--capture",
        action="store_true",
        help="capture headers at the sender and record recovery time per loss episode (transfer.capture)",
    )
    run.add_argument(
        "--rtt-probe",
        metavar="INTERVAL",
        help="ping S -> WH this often during each run, e.g. 100ms: the RTT the transfer puts on others "
        "(transfer.rtt_probe; 0 off)",
    )
    run.add_argument("--out", help="result file (.json) or directory (default: results/NAME-STAMP.json)")
    run.add_argument("--baseline", help="case the table's ratios refer to, e.g. stock/cubic")
    run.add_argument("--no-plot", action="store_true", help="do not write the plot")
    run.add_argument("--plot-format", default="png", metavar="FMT", help=PLOT_FORMAT_HELP)
    run.add_argument("--no-report", action="store_true", help=argparse.SUPPRESS)
    _add_backend_args(run)
    run.set_defaults(func=cmd_run)

    rep = sub.add_parser(
        "report", help="tables, verdicts, plots and CSV from result files (several merge into one table; no traffic)"
    )
    rep.add_argument("files", nargs="+", metavar="FILE")
    rep.add_argument("--baseline", help="case the ratios refer to, within each file (default: its first case)")
    rep.add_argument("--no-plot", action="store_true", help="do not write the plot")
    rep.add_argument("--plot-format", default="png", metavar="FMT", help=PLOT_FORMAT_HELP)
    rep.add_argument("--csv", metavar="FILE", help="also write every case's figures as CSV to FILE (- for stdout)")
    rep.set_defaults(func=cmd_report)

    rec = sub.add_parser("recovery", help="recompute the recovery-time summaries of a result from its kept captures")
    rec.add_argument("file", metavar="FILE")
    rec.set_defaults(func=cmd_recovery)

    clean = sub.add_parser("clean", help="remove namespaces and processes left by a crashed run")
    clean.add_argument("--force", action="store_true", help="also remove those of runs still alive")
    clean.set_defaults(func=cmd_clean)

    bk = sub.add_parser("backend", help="say which backend would run here and why")
    bk.add_argument("--kernel-release", action="store_true", help="print the kernel release modules are built for")
    bk.add_argument("--kernel-build-dir", action="store_true", help="print that kernel's build directory (KDIR)")
    _add_backend_args(bk)
    bk.set_defaults(func=cmd_backend)

    kern = sub.add_parser(
        "kernels",
        help="kernels the VM boots: list, fetch SERIES (unpack Debian's newest into the cache), path [KERNEL]",
        add_help=False,
    )
    kern.add_argument("kernels_args", nargs=argparse.REMAINDER, metavar="ACTION ...")
    kern.set_defaults(func=cmd_kernels)

    exe = sub.add_parser("exec", help="run a command in the backend (inside the VM for vm)")
    _add_backend_args(exe)
    exe.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD ARGS...")
    exe.set_defaults(func=cmd_exec)

    sub.add_parser("profiles", help="list link profiles").set_defaults(func=cmd_profiles)
    prof = sub.add_parser("profile", help="inspect a link profile")
    prof_sub = prof.add_subparsers(dest="profile_command", metavar="ACTION", required=True)
    show = prof_sub.add_parser("show", help="print the tc commands a profile compiles to")
    show.add_argument("name")
    show.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="change one profile key")
    show.add_argument("--duration", default="20s", help="horizon for scheduled changes (default 20s)")
    show.set_defaults(func=cmd_profile_show)
    sub.add_parser("schemes", help="list schemes").set_defaults(func=lambda a: cmd_list("schemes"))
    sub.add_parser("senders", help="list sender presets").set_defaults(func=lambda a: cmd_list("senders"))
    sub.add_parser("workloads", help="list workloads").set_defaults(func=lambda a: cmd_list("workloads"))
    sub.add_parser("experiments", help="list experiments").set_defaults(func=lambda a: cmd_list("experiments"))
    return parser


def _run_the_checkout_meant() -> None:
    """Re-run this command with the code of the checkout it was started in (checkout.py)."""
    if "AIRTCP_ROOT" in os.environ:
        return
    other = meant_checkout(Path.cwd(), REPO_ROOT, Path(sys.prefix))
    if other is None:
        return
    print(f"airtcp: running the checkout at {other} (the current directory), not {REPO_ROOT}", file=sys.stderr)
    env = dict(os.environ, AIRTCP_ROOT=str(other), PYTHONPATH=str(other / "testbed"))
    os.execve(sys.executable, [sys.executable, "-m", "airtcp", *sys.argv[1:]], env)


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        _run_the_checkout_meant()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except AirtcpError as exc:
        print(f"airtcp: error: {exc}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        print("airtcp: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader left (`airtcp profiles | head`): stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
