"""Serve a live web page over run folders and sweep folders: every run and sweep, their charts, logs, trials.

  playground ui [DIR ...] [--port N] [--host ADDR] [--token TOKEN] [--allow-actions]

Reads the files the folders already hold (metrics.jsonl, opts.json, train.log, trial.json, sweep.json, ...) and
follows them as they grow; writes nothing into them. Listens on 127.0.0.1 unless told otherwise; any other address
needs a token (given, or generated and printed). The pages' buttons (pause and resume a sweep, stop a run after a
checkpoint) work only with --allow-actions. Needs the `ui` extra (pip install 'playground[ui]'). docs/ui.md.
"""
from __future__ import annotations

import argparse
import errno
import os
import socket
import sys
import threading

from playground.processes.exit_codes import EXIT_DONE, UserError

TAKES_STOP_SIGNALS = True     # SIGTERM and Ctrl-C end the server cleanly, exit 0
DEFAULT_FOLDERS = ("runs", "sweeps")
DEFAULT_PORT = 8765


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dirs", nargs="*", metavar="DIR",
                        help="folders holding run folders and sweep folders, or such folders themselves (default: "
                             "runs/ and sweeps/ of the working directory, those that exist)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"the port to listen on (default {DEFAULT_PORT}; 0: a free one, printed)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="the address to listen on (default 127.0.0.1: this machine only; any other needs a token)")
    parser.add_argument("--token", help="the token a browser must bring (?token=... once, then a cookie); required "
                                        "on an address other than loopback, generated and printed when not given")
    parser.add_argument("--allow-actions", action="store_true",
                        help="let the pages pause and resume sweeps (`sweep pause`/`resume`) and stop runs (SIGTERM: "
                             "a checkpoint, then exit 75)")


def main(args: argparse.Namespace) -> int:
    from playground.processes.supervisor import stop_signals_call
    from playground.ui.web.access import is_loopback, new_token
    from playground.ui.web.server import UiServer

    folders = served_folders(args.dirs)
    token = args.token
    if token is None and not is_loopback(args.host):
        token = new_token()
    try:
        server = UiServer(folders, args.host, args.port, token, args.allow_actions)
    except OSError as err:
        hint = "; --port 0 picks a free port" if err.errno == errno.EADDRINUSE else ""
        raise UserError(f"--host {args.host} --port {args.port}: cannot listen there ({err.strerror}){hint}") from None
    shown = socket.gethostname() if args.host in ("0.0.0.0", "::") else args.host
    shown = f"[{shown}]" if ":" in shown else shown
    address = f"http://{shown}:{server.port}/" + (f"?token={token}" if token else "")
    print(f"playground ui: serving {', '.join(folders)} at {address}", flush=True)
    if args.allow_actions:
        print("playground ui: actions are on: the pages can pause and resume sweeps and stop runs", flush=True)
    print("playground ui: Ctrl-C stops it", flush=True)
    stopped = threading.Event()
    thread = threading.Thread(target=server.httpd.serve_forever, name="ui-server", daemon=True)
    with stop_signals_call(lambda _signum: stopped.set()):
        thread.start()
        while not stopped.wait(1.0):
            pass
    server.httpd.shutdown()
    server.httpd.server_close()
    print("playground ui: stopped", file=sys.stderr)
    return EXIT_DONE


def served_folders(given: list[str]) -> list[str]:
    """The folders to serve (absolute), or UserError naming the one that is not a folder."""
    if not given:
        found = [os.path.abspath(name) for name in DEFAULT_FOLDERS if os.path.isdir(name)]
        if not found:
            raise UserError(f"no runs/ or sweeps/ in {os.getcwd()}: name the folders to serve (playground ui DIR ...)")
        return found
    for folder in given:
        if not os.path.isdir(folder):
            raise UserError(f"{folder}: no such folder (give folders that hold run folders or sweep folders)")
    return [os.path.abspath(folder) for folder in given]
