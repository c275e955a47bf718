# SPDX-License-Identifier: GPL-2.0-only
"""Parse a pollux console log into its machine-readable @events.

Hypervisor events are lines `@<event> {json}`. Guest lines are prefixed
`[<vm>] `; a guest's `@bench` line is the one guest event tools accept.
Anything else a guest prints is never an event, so a guest cannot forge one.
Trace lines (`trace=`) are `<ns>: <vm>: <event>: <details>`; they start
with a digit, so no guest line can be one either.
"""
import json
import re

EVENT_RE = re.compile(r"^@(\w+) (\{.*\})$")
GUEST_RE = re.compile(r"^\[([^\]]*)\] (.*)$")
GUEST_EVENTS = {"bench"}
TRACE_RE = re.compile(r"^(\d+): ([A-Za-z0-9_.-]+): (\w+): (.*)$")


class Trace:
    def __init__(self, ns, vm, event, details):
        self.ns, self.vm, self.event, self.details = ns, vm, event, details


class Event:
    def __init__(self, name, body, vm=None):
        self.name, self.body, self.vm = name, body, vm

    def __getitem__(self, key):
        return self.body[key]

    def get(self, key, default=None):
        return self.body.get(key, default)

    def __repr__(self):
        prefix = f"[{self.vm}] " if self.vm else ""
        return f"{prefix}@{self.name} {json.dumps(self.body)}"


class ConsoleLog:
    def __init__(self, text, returncode=None):
        self.text = text
        self.returncode = returncode
        self.lines = [ln.rstrip("\r") for ln in text.splitlines()]
        self.events = []
        self.guest_lines = {}
        self.traces = []
        for ln in self.lines:
            t = TRACE_RE.match(ln)
            if t:
                self.traces.append(Trace(int(t.group(1)), t.group(2), t.group(3), t.group(4)))
                continue
            vm = None
            g = GUEST_RE.match(ln)
            if g:
                vm, ln = g.group(1), g.group(2)
                self.guest_lines.setdefault(vm, []).append(ln)
            m = EVENT_RE.match(ln)
            if not m or (vm is not None and m.group(1) not in GUEST_EVENTS):
                continue
            try:
                body = json.loads(m.group(2))
            except ValueError:
                continue
            self.events.append(Event(m.group(1), body, vm))

    def stats(self, scope, vm):
        """The @stats records of one scope and VM, keyed by vCPU for scope vcpu."""
        got = [e for e in self.all("stats") if e.get("scope") == scope and e.get("vm") == vm]
        return {e["vcpu"]: e for e in got} if scope == "vcpu" else got

    def all(self, name):
        return [e for e in self.events if e.name == name]

    def one(self, name):
        found = self.all(name)
        assert len(found) == 1, f"expected one @{name}, found {len(found)}"
        return found[0]

    def shutdown_status(self):
        ev = self.all("shutdown")
        assert ev, "no @shutdown line"
        assert self.events[-1].name == "shutdown", f"@shutdown is not the last event: {self.events[-1]}"
        return ev[-1]["status"]
