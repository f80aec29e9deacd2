"""Transactions by hand for the mempool parity tests: serialisation, ids,
the legacy and BIP143 signature hashes, ECDSA over secp256k1 (slow, plain
Python integers: a few milliseconds a signature, enough for a test), scripts
and the coins the tests own.

Written from the BIPs and Core's serialisation, independently of peerd's
proto/ and script/, so peerd's codec is not checked by itself. Only the
standard library is used.
"""
import hashlib
import hmac
import struct

from conftest import sha256d, ser_compact as compact

# ---- secp256k1 ---------------------------------------------------------------

P = 2**256 - 2**32 - 977
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
G = (0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798,
     0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8)


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if a[0] == b[0]:
        if (a[1] + b[1]) % P == 0:
            return None
        lam = 3 * a[0] * a[0] * pow(2 * a[1], -1, P) % P
    else:
        lam = (b[1] - a[1]) * pow(b[0] - a[0], -1, P) % P
    x = (lam * lam - a[0] - b[0]) % P
    return x, (lam * (a[0] - x) - a[1]) % P


def _mul(k, pt=G):
    r = None
    while k:
        if k & 1:
            r = _add(r, pt)
        pt = _add(pt, pt)
        k >>= 1
    return r


class Key:
    """A private key; pub is the compressed public key."""

    def __init__(self, secret):
        self.d = secret % N
        x, y = _mul(self.d)
        self.pub = bytes([2 + (y & 1)]) + x.to_bytes(32, "big")

    def sign(self, digest, high_s=False):
        """DER ECDSA signature of a 32-byte digest (low S unless high_s)."""
        z = int.from_bytes(digest, "big")
        k = int.from_bytes(hmac.new(self.d.to_bytes(32, "big"), digest, hashlib.sha256).digest(), "big") % N
        r = _mul(k)[0] % N
        s = pow(k, -1, N) * (z + r * self.d) % N
        if (s > N // 2) != high_s:
            s = N - s
        return der(r, s)

    def wif(self):
        """Regtest WIF (compressed), for Core's importdescriptors."""
        return base58check(b"\xef" + self.d.to_bytes(32, "big") + b"\x01")


def der(r, s):
    def num(v):
        b = v.to_bytes(33, "big").lstrip(b"\0")
        if b[0] & 0x80:
            b = b"\0" + b
        return b"\x02" + bytes([len(b)]) + b

    body = num(r) + num(s)
    return b"\x30" + bytes([len(body)]) + body


_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def base58check(payload):
    data = payload + sha256d(payload)[:4]
    n = int.from_bytes(data, "big")
    out = ""
    while n:
        n, m = divmod(n, 58)
        out = _B58[m] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


# ---- scripts -----------------------------------------------------------------

OP_0, OP_1, OP_2, OP_3, OP_16 = 0x00, 0x51, 0x52, 0x53, 0x60
OP_NOP, OP_IF, OP_ENDIF, OP_DROP, OP_DUP, OP_EQUAL, OP_EQUALVERIFY = 0x61, 0x63, 0x68, 0x75, 0x76, 0x87, 0x88
OP_HASH160, OP_CHECKSIG, OP_CHECKMULTISIG, OP_RETURN = 0xA9, 0xAC, 0xAE, 0x6A
OP_CLTV, OP_NOP10 = 0xB1, 0xB9


def hash160(b):
    return hashlib.new("ripemd160", hashlib.sha256(b).digest()).digest()


def push(data):
    n = len(data)
    if n < 0x4C:
        return bytes([n]) + data
    if n <= 0xFF:
        return b"\x4c" + bytes([n]) + data
    if n <= 0xFFFF:
        return b"\x4d" + struct.pack("<H", n) + data
    return b"\x4e" + struct.pack("<I", n) + data


def script(*items):
    """Opcodes (ints) and pushes (bytes) in order."""
    return b"".join(bytes([i]) if isinstance(i, int) else push(i) for i in items)


def num(v):
    """A script number's bytes (CScriptNum)."""
    if v == 0:
        return b""
    out = bytearray()
    a = abs(v)
    while a:
        out.append(a & 0xFF)
        a >>= 8
    if out[-1] & 0x80:
        out.append(0x80 if v < 0 else 0)
    elif v < 0:
        out[-1] |= 0x80
    return bytes(out)


def p2pkh(pub):
    return script(OP_DUP, OP_HASH160, hash160(pub), OP_EQUALVERIFY, OP_CHECKSIG)


def p2wpkh(pub):
    return b"\x00\x14" + hash160(pub)


def p2sh(redeem):
    return script(OP_HASH160, hash160(redeem), OP_EQUAL)


def p2wsh(ws):
    return b"\x00\x20" + hashlib.sha256(ws).digest()


def op_return(payload_len):
    """An OP_RETURN script of 1 + push(payload) bytes."""
    return bytes([OP_RETURN]) + push(b"\x42" * payload_len)


TRUE = bytes([OP_1])
P2A = bytes.fromhex("51024e73")


# ---- transactions ------------------------------------------------------------

class Coin:
    """An output a test can spend: outpoint (txid hex, n), value in sats, its script,
    and how to solve it (kind)."""

    def __init__(self, txid, n, value, spk, kind, height=None):
        self.txid, self.n, self.value, self.spk, self.kind = txid, n, value, spk, kind
        self.height = height

    def __repr__(self):
        return "Coin(%s:%d %d %s)" % (self.txid[:12], self.n, self.value, self.kind)


class Tx:
    """A transaction under construction. Inputs carry the coin they spend
    (for signing) or only an outpoint."""

    def __init__(self, version=2, locktime=0):
        self.version = version
        self.locktime = locktime
        self.vin = []  # [txid hex, n, scriptSig, sequence]
        self.wit = []  # list of stacks
        self.coins = []  # Coin or None
        self.vout = []  # [value, script]

    def add_in(self, coin, seq=0xFFFFFFFD, script_sig=b"", witness=None):
        if isinstance(coin, Coin):
            self.vin.append([coin.txid, coin.n, script_sig, seq])
            self.coins.append(coin)
        else:
            self.vin.append([coin[0], coin[1], script_sig, seq])
            self.coins.append(None)
        self.wit.append(list(witness or []))
        return self

    def add_out(self, value, spk):
        self.vout.append([value, spk])
        return self

    def ser(self, witness=True):
        wit = witness and any(self.wit)
        b = struct.pack("<i", self.version)
        if wit:
            b += b"\x00\x01"
        b += compact(len(self.vin))
        for t, n, ss, seq in self.vin:
            b += bytes.fromhex(t)[::-1] + struct.pack("<I", n) + compact(len(ss)) + ss + struct.pack("<I", seq)
        b += compact(len(self.vout))
        for v, spk in self.vout:
            b += struct.pack("<q", v) + compact(len(spk)) + spk
        if wit:
            for stack in self.wit:
                b += compact(len(stack)) + b"".join(compact(len(i)) + i for i in stack)
        return b + struct.pack("<I", self.locktime)

    def hex(self):
        return self.ser().hex()

    @property
    def txid(self):
        return sha256d(self.ser(False))[::-1].hex()

    @property
    def wtxid(self):
        return sha256d(self.ser())[::-1].hex()

    @property
    def vsize(self):
        w = len(self.ser(False)) * 3 + len(self.ser())
        return (w + 3) // 4

    def fee(self):
        return sum(c.value for c in self.coins) - sum(v for v, _ in self.vout)

    def out(self, n, kind="wsh_true"):
        """Output n as a Coin."""
        return Coin(self.txid, n, self.vout[n][0], self.vout[n][1], kind)

    # ---- signature hashes ----------------------------------------------
    def sighash_legacy(self, i, script_code, hashtype=1):
        t = Tx(self.version, self.locktime)
        t.vin = [[a, b, script_code if j == i else b"", d] for j, (a, b, _, d) in enumerate(self.vin)]
        t.wit = [[] for _ in self.vin]
        t.vout = self.vout
        return sha256d(t.ser(False) + struct.pack("<I", hashtype))

    def sighash_v0(self, i, script_code, amount, hashtype=1):
        prevouts = b"".join(bytes.fromhex(t)[::-1] + struct.pack("<I", n) for t, n, _, _ in self.vin)
        seqs = b"".join(struct.pack("<I", s) for _, _, _, s in self.vin)
        outs = b"".join(struct.pack("<q", v) + compact(len(s)) + s for v, s in self.vout)
        t, n, _, seq = self.vin[i]
        pre = (struct.pack("<i", self.version) + sha256d(prevouts) + sha256d(seqs)
               + bytes.fromhex(t)[::-1] + struct.pack("<I", n) + compact(len(script_code)) + script_code
               + struct.pack("<q", amount) + struct.pack("<I", seq) + sha256d(outs)
               + struct.pack("<I", self.locktime) + struct.pack("<I", hashtype))
        return sha256d(pre)

    def sign(self, key, high_s=False):
        """Fill every input whose coin the test owns (by its kind) and return self."""
        for i, c in enumerate(self.coins):
            if c is None:
                continue
            if c.kind == "wsh_true":
                self.wit[i] = [TRUE]
            elif c.kind == "sh_true":
                self.vin[i][2] = push(TRUE)
            elif c.kind in ("p2a", "bare_true"):
                self.wit[i] = []
            elif c.kind == "pkh":
                sig = key.sign(self.sighash_legacy(i, c.spk), high_s) + b"\x01"
                self.vin[i][2] = push(sig) + push(key.pub)
            elif c.kind == "bare_ms":
                sig = key.sign(self.sighash_legacy(i, c.spk), high_s) + b"\x01"
                self.vin[i][2] = bytes([OP_0]) + push(sig)
            elif c.kind in ("wpkh", "sh_wpkh"):
                sig = key.sign(self.sighash_v0(i, p2pkh(key.pub), c.value), high_s) + b"\x01"
                self.wit[i] = [sig, key.pub]
                if c.kind == "sh_wpkh":
                    self.vin[i][2] = push(p2wpkh(key.pub))
            elif c.kind.startswith("wsh:"):
                pass  # the test writes this witness itself
            else:
                raise ValueError("cannot solve %s" % c.kind)
        return self


# ---- taproot (BIP341), script path only ---------------------------------------

def tagged(tag, data):
    t = hashlib.sha256(tag.encode()).digest()
    return hashlib.sha256(t + t + data).digest()


def lift_x(x):
    """The point with x and an even y."""
    y2 = (pow(x, 3, P) + 7) % P
    y = pow(y2, (P + 1) // 4, P)
    assert y * y % P == y2, "x not on the curve"
    return x, y if y % 2 == 0 else P - y


NUMS_X = 0x50929B74C1A04954B78B4B6035E97A5E078A5A0F28EC96D547BFEE9ACE803AC0


def taproot_leaf(leaf_script, leaf_version=0xC0, internal_x=NUMS_X):
    """(scriptPubKey, control block) of an output whose only spend is one leaf."""
    leaf = tagged("TapLeaf", bytes([leaf_version]) + compact(len(leaf_script)) + leaf_script)
    ix = internal_x.to_bytes(32, "big")
    t = int.from_bytes(tagged("TapTweak", ix + leaf), "big")
    q = _add(lift_x(internal_x), _mul(t))
    spk = b"\x51\x20" + q[0].to_bytes(32, "big")
    control = bytes([leaf_version | (q[1] & 1)]) + ix
    return spk, control
