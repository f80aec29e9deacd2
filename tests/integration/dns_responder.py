"""A DNS responder on loopback UDP for the seed tests (Python stdlib only).

peerd's -dnsserver=127.0.0.1:PORT sends every lookup here, so a test plays
the DNS seeds without a query leaving the machine. The responder answers A
and AAAA questions from a table (name -> addresses) and NXDOMAIN for any
other name, and counts every question it gets by (name, type). It only
ever hands out loopback addresses: a test cannot make peerd dial out.

Wire format: RFC 1035 section 4 (header, one question, answers with a
name pointer to the question at offset 12).
"""
import ipaddress
import socket
import struct
import threading
from collections import Counter

QTYPE_A = 1
QTYPE_AAAA = 28
QTYPE_NAMES = {QTYPE_A: "A", QTYPE_AAAA: "AAAA"}


def _read_name(msg, off):
    labels = []
    while True:
        n = msg[off]
        if n == 0:
            return ".".join(labels).lower(), off + 1
        if n & 0xC0:
            raise ValueError("compressed name in a question")
        labels.append(msg[off + 1 : off + 1 + n].decode("ascii", "replace"))
        off += 1 + n


class DnsResponder:
    """Serves `answers` ({"name": ["127.0.0.1", ...]}, names without the trailing dot)."""

    def __init__(self, answers=None, host="127.0.0.1"):
        self.answers = {}
        for name, addrs in (answers or {}).items():
            self.set(name, addrs)
        self.queries = Counter()  # (name, "A" | "AAAA" | str(type)) -> count
        self.lock = threading.Lock()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((host, 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.addr = "%s:%d" % (host, self.port)
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def set(self, name, addrs):
        ips = [ipaddress.ip_address(a) for a in addrs]
        for ip in ips:
            # Never anything off this machine (tests must not make peerd dial out).
            assert ip.is_loopback, "the responder hands out loopback addresses only, not %s" % ip
        self.answers[name.rstrip(".").lower()] = ips

    def count(self, name, qtype=None):
        name = name.rstrip(".").lower()
        with self.lock:
            return sum(c for (n, t), c in self.queries.items() if n == name and (qtype is None or t == qtype))

    def names(self):
        with self.lock:
            return {n for (n, _t) in self.queries}

    def _answer(self, msg):
        qid, flags, qd, _an, _ns, _ar = struct.unpack(">HHHHHH", msg[:12])
        if qd != 1:
            return None
        name, off = _read_name(msg, 12)
        qtype, qclass = struct.unpack(">HH", msg[off : off + 4])
        question = msg[12 : off + 4]
        with self.lock:
            self.queries[(name, QTYPE_NAMES.get(qtype, str(qtype)))] += 1
        rd = flags & 0x0100
        if name not in self.answers:
            # QR, RD copied, RA, NXDOMAIN.
            return struct.pack(">HHHHHH", qid, 0x8000 | rd | 0x0080 | 3, 1, 0, 0, 0) + question
        records = b""
        count = 0
        for ip in self.answers[name]:
            want = QTYPE_A if ip.version == 4 else QTYPE_AAAA
            if qtype != want:
                continue
            rdata = ip.packed
            # Name: pointer to the question's name (offset 12); TTL 60.
            records += struct.pack(">HHHIH", 0xC00C, qtype, qclass, 60, len(rdata)) + rdata
            count += 1
        return struct.pack(">HHHHHH", qid, 0x8000 | rd | 0x0080, 1, count, 0, 0) + question + records

    def _serve(self):
        while not self._stop:
            try:
                msg, peer = self.sock.recvfrom(4096)
            except socket.timeout:
                continue
            except OSError:
                return
            try:
                reply = self._answer(msg)
            except (ValueError, IndexError, struct.error):
                reply = None
            if reply:
                self.sock.sendto(reply, peer)

    def close(self):
        self._stop = True
        self._thread.join(timeout=2)
        self.sock.close()
