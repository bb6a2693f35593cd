"""A program in the sandbox on the user's terminal: an exec with a pseudo-terminal through the Docker API, so it
works wherever the engine is (as the tool channel does). The terminal is raw while it runs, so Ctrl-C and every
key go to the program; its size follows the window. Used for an interactive Aider (/aider)."""

from __future__ import annotations

import os
import select
import signal
import sys


def _size(fd: int) -> tuple[int, int] | None:
    try:
        size = os.get_terminal_size(fd)
        return size.lines, size.columns
    except OSError:
        return None


def attach(client, container_id: str, argv: list[str], user: tuple[int, int], environment: dict[str, str],
           workdir: str = "/workspace") -> int:
    """Run argv in the container on this terminal until it exits; its exit code (-1 when the engine has none)."""
    made = client.api.exec_create(container_id, argv, stdin=True, stdout=True, stderr=True, tty=True,
                                  user=f"{user[0]}:{user[1]}", environment=environment, workdir=workdir)
    wrapper = client.api.exec_start(made["Id"], tty=True, socket=True)
    sock = getattr(wrapper, "_sock", wrapper)
    fd_in, fd_out = sys.stdin.fileno(), sys.stdout.fileno()
    saved = None

    def resize(*_args) -> None:
        if (size := _size(fd_out)) is not None:
            try:
                client.api.exec_resize(made["Id"], height=size[0], width=size[1])
            except Exception:  # noqa: BLE001 - not started yet, or gone: the next resize will do
                pass

    previous = signal.signal(signal.SIGWINCH, resize)
    try:
        if os.isatty(fd_in):
            import termios
            import tty

            saved = termios.tcgetattr(fd_in)
            tty.setraw(fd_in)
        resize()
        _pump(sock, fd_in, fd_out)
    finally:
        if saved is not None:
            import termios

            termios.tcsetattr(fd_in, termios.TCSADRAIN, saved)
        signal.signal(signal.SIGWINCH, previous)
        for thing in (sock, wrapper):
            try:
                thing.close()
            except Exception:  # noqa: BLE001 - already closed
                pass
    code = client.api.exec_inspect(made["Id"]).get("ExitCode")
    return -1 if code is None else int(code)


def _pump(sock, fd_in: int, fd_out: int) -> None:
    """Keys to the program, its output to the terminal, until it closes its side."""
    reading = [sock, fd_in]
    while True:
        try:
            ready = select.select(reading, [], [])[0]
        except InterruptedError:  # a window resize
            continue
        if sock in ready:
            try:
                data = sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                return
            os.write(fd_out, data)
        if fd_in in ready:
            data = os.read(fd_in, 65536)
            if not data:  # our input ended: the program sees end of input, and we wait for it to finish
                reading.remove(fd_in)
                sock.sendall(b"\x04")
                continue
            sock.sendall(data)
