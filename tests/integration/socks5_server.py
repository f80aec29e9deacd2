"""A SOCKS5 proxy for tests (RFC 1928 with RFC 1929's username/password),
on 127.0.0.1 only, written for peerd's tests from the RFCs.

It records every request (the methods offered, the credentials, the
address type, host and port asked for) and relays a CONNECT only to a
loopback address the test mapped that destination to: whatever a node asks
for (a routable IP, an onion name, a host name), nothing leaves this
machine. An unmapped destination is answered "host unreachable" (4).

    proxy = Socks5Server()
    proxy.route("x.onion", 8333, 12345)    # to 127.0.0.1:12345
    ... proxy.requests[0].host == "x.onion"
    proxy.close()
"""
import socket
import struct
import threading
import time

from bitcoind import free_port


class Request:
    """One client's negotiation, as far as it got."""

    def __init__(self):
        self.methods = None   # the methods the greeting offered
        self.method = None    # the one chosen
        self.username = None
        self.password = None
        self.atyp = None      # 1 IPv4, 3 domain name, 4 IPv6
        self.host = None      # text: "1.2.3.4", "::1" or the name
        self.port = None
        self.reply = None     # the REP code sent

    def __repr__(self):
        return "Request(%r)" % self.__dict__


def _recv_exact(conn, n):
    b = b""
    while len(b) < n:
        chunk = conn.recv(n - len(b))
        if not chunk:
            raise ConnectionError("closed after %d of %d bytes" % (len(b), n))
        b += chunk
    return b


class Socks5Server:
    def __init__(self, auth=True):
        """auth: pick username/password when offered (else always no-auth)."""
        self.auth = auth
        self.port = free_port()
        self.requests = []
        self._routes = {}
        self._lock = threading.Lock()
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", self.port))
        self._sock.listen(16)
        self._closed = False
        self._conns = []
        threading.Thread(target=self._accept_loop, daemon=True).start()

    @property
    def addr(self):
        return "127.0.0.1:%d" % self.port

    def route(self, host, port, local_port):
        """CONNECTs to (host, port) go to 127.0.0.1:local_port."""
        with self._lock:
            self._routes[(host, port)] = local_port

    def wait_requests(self, n, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                done = [r for r in self.requests if r.reply is not None]
                if len(done) >= n:
                    return done
            time.sleep(0.02)
        raise AssertionError("%d SOCKS5 requests answered, %d wanted: %r"
                             % (len(done), n, self.requests))

    def close(self):
        self._closed = True
        try:
            self._sock.close()
        except OSError:
            pass
        with self._lock:
            conns, self._conns = self._conns, []
        for c in conns:
            try:
                c.close()
            except OSError:
                pass

    # ---- the server side --------------------------------------------------
    def _accept_loop(self):
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with self._lock:
                self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        req = Request()
        with self._lock:
            self.requests.append(req)
        conn.settimeout(10)
        try:
            ver, n = _recv_exact(conn, 2)
            assert ver == 5, ver
            req.methods = list(_recv_exact(conn, n))
            req.method = 2 if self.auth and 2 in req.methods else 0
            conn.sendall(bytes([5, req.method]))
            if req.method == 2:
                ver, ulen = _recv_exact(conn, 2)
                assert ver == 1, ver
                req.username = _recv_exact(conn, ulen).decode()
                plen = _recv_exact(conn, 1)[0]
                req.password = _recv_exact(conn, plen).decode()
                conn.sendall(bytes([1, 0]))
            ver, cmd, _, atyp = _recv_exact(conn, 4)
            assert ver == 5 and cmd == 1, (ver, cmd)
            req.atyp = atyp
            if atyp == 1:
                req.host = socket.inet_ntop(socket.AF_INET, _recv_exact(conn, 4))
            elif atyp == 4:
                req.host = socket.inet_ntop(socket.AF_INET6, _recv_exact(conn, 16))
            elif atyp == 3:
                req.host = _recv_exact(conn, _recv_exact(conn, 1)[0]).decode()
            else:
                raise AssertionError("address type %d" % atyp)
            req.port = struct.unpack(">H", _recv_exact(conn, 2))[0]
            with self._lock:
                local = self._routes.get((req.host, req.port))
            if local is None:
                self._answer(conn, req, 4)
                conn.close()
                return
            try:
                up = socket.create_connection(("127.0.0.1", local), timeout=5)
            except OSError:
                self._answer(conn, req, 5)
                conn.close()
                return
            self._answer(conn, req, 0)
            with self._lock:
                self._conns.append(up)
            self._relay(conn, up)
        except (OSError, AssertionError, ConnectionError, ValueError):
            conn.close()

    @staticmethod
    def _answer(conn, req, rep):
        # The bound address: 0.0.0.0:0 (IPv4, as many proxies answer).
        conn.sendall(bytes([5, rep, 0, 1, 0, 0, 0, 0, 0, 0]))
        req.reply = rep

    @staticmethod
    def _relay(a, b):
        def pump(src, dst):
            try:
                src.settimeout(None)
                while True:
                    data = src.recv(65536)
                    if not data:
                        break
                    dst.sendall(data)
            except OSError:
                pass
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        threading.Thread(target=pump, args=(a, b), daemon=True).start()
        threading.Thread(target=pump, args=(b, a), daemon=True).start()
