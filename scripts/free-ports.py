#!/usr/bin/env python3
"""Prints N free TCP ports on 127.0.0.1, one a line (`free-ports.py N [NAME ...]`: with names,
`NAME=PORT` lines), for servers the test scripts start and name the port of.

The ports are taken below the kernel's ephemeral range (`ip_local_port_range`, 32768–60999 by
default), not from it. A port the kernel handed out for port 0 is free only until something
else asks: between this script and the server's own bind, any outgoing connection of the
machine (a test's HTTP client, PostgreSQL's replication, etcd) may be given the same ephemeral
port, and the server then cannot listen (a cluster whose first member never led, 120 s later).
No outgoing connection is given a port below the range."""
import random
import socket
import sys


def ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as handle:
            return int(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_ports(count):
    candidates = list(range(10000, max(10001, ephemeral_low())))
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
