#!/usr/bin/env python3
"""Prints N free TCP ports on 127.0.0.1, one a line (`free-ports.py N [NAME ...]`: with names,
`NAME=PORT` lines), for servers the test scripts start and name the port of.

The ports are taken below the kernel's ephemeral range (`ip_local_port_range`, 32768–60999 by
default), not from it. A port the kernel handed out for port 0 is free only until something
else asks: between this script and the server's own bind, any outgoing connection of the
machine (a test's HTTP client, PostgreSQL's replication, etcd) may be given the same ephemeral
port, and the server then cannot listen (a cluster whose first member never led, 120 s later).
No outgoing connection is given a port below the range.

CLINIC_TEST_PORTS=LOW-HIGH narrows the choice to those ports (still below the range): test
runs side by side on one machine (scripts/test.sh) each take their own, so that one's choice
cannot be bound by the other's server between this script and that server's bind."""
import os
import random
import socket
import sys


def ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as handle:
            return int(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def port_range():
    """The ports to choose from: CLINIC_TEST_PORTS's, else 10000 up to the ephemeral range."""
    low, high = 10000, max(10001, ephemeral_low())
    setting = os.environ.get("CLINIC_TEST_PORTS", "")
    if setting:
        try:
            first, last = (int(part) for part in setting.split("-"))
        except ValueError:
            sys.exit(f"free-ports: CLINIC_TEST_PORTS={setting!r} is not LOW-HIGH")
        low, high = max(1024, first), min(high, last + 1)
        if low >= high:
            sys.exit(f"free-ports: CLINIC_TEST_PORTS={setting!r} holds no port below the ephemeral range")
    return range(low, high)


def free_ports(count):
    candidates = list(port_range())
    random.shuffle(candidates)
    held, ports = [], []
    for port in candidates:
        probe = socket.socket()
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            probe.close()
            continue
        held.append(probe)
        ports.append(port)
        if len(ports) == count:
            break
    for probe in held:
        probe.close()
    if len(ports) < count:
        sys.exit("free-ports: not enough free ports below the ephemeral range")
    return ports


if __name__ == "__main__":
    names = sys.argv[2:]
    for index, port in enumerate(free_ports(int(sys.argv[1]))):
        print(f"{names[index]}={port}" if names else port)
