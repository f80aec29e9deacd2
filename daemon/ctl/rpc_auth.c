/*
 * daemon/ctl/rpc_auth.c: who may use the HTTP JSON-RPC door, as Core 29's
 * httprpc.cpp and rpc/request.cpp decide it.
 *
 * Every way in ends as a credential {user, salt, HMAC-SHA256(salt, pass)}:
 * an -rpcauth line as given (Core's share/rpcauth writes them), and the
 * cookie or -rpcuser/-rpcpassword hashed with a random salt, so one check
 * serves all and no plain password stays in memory longer than the conf.
 * The check compares in time independent of where strings differ (Core's
 * TimingResistantEqual); the 250 ms pause after a wrong password is the
 * server's (ctl/rpc_http.c).
 *
 * The cookie: "__cookie__:" and 32 random bytes in hex, written to a
 * temporary file and renamed into place (a reader never sees half of it),
 * mode 0600 unless -rpccookieperms says group or all, removed at exit
 * only when this process wrote it.
 */
#include "daemon/ctl/rpc.h"

#include <errno.h>
#include <fcntl.h>
#include <nettle/hmac.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"

bool rpc_timing_equal(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	if (nb == 0)
		return na == 0;
	/* Every byte of a is looked at whatever b holds. */
	unsigned acc = (unsigned)(na ^ nb);
	for (size_t i = 0; i < na; i++)
		acc |= (unsigned char)a[i] ^ (unsigned char)b[i % nb];
	return acc == 0;
}

static void hmac_hex(const char *salt, const char *pass, size_t passlen, char hex[65])
{
	struct hmac_sha256_ctx h;
	uint8_t out[SHA256_DIGEST_SIZE];
	hmac_sha256_set_key(&h, strlen(salt), (const uint8_t *)salt);
	hmac_sha256_update(&h, passlen, (const uint8_t *)pass);
	hmac_sha256_digest(&h, sizeof(out), out);
	sodium_bin2hex(hex, 65, out, sizeof(out));
	sodium_memzero(&h, sizeof(h));
}

static int add_cred(struct rpc_auth *a, const char *user, size_t ulen, const char *salt,
                    size_t slen, const char *hash, size_t hlen)
{
	struct rpc_cred *v = xrealloc(a->v, (a->n + 1) * sizeof(*v));
	if (!v)
		return -1;
	a->v = v;
	struct rpc_cred *c = &v[a->n];
	c->user = xmalloc(ulen + 1);
	c->salt = xmalloc(slen + 1);
	c->hash = xmalloc(hlen + 1);
	if (!c->user || !c->salt || !c->hash) {
		xfree(c->user);
		xfree(c->salt);
		xfree(c->hash);
		return -1;
	}
	memcpy(c->user, user, ulen);
	c->user[ulen] = 0;
	memcpy(c->salt, salt, slen);
	c->salt[slen] = 0;
	memcpy(c->hash, hash, hlen);
	c->hash[hlen] = 0;
	a->n++;
	return 0;
}

/* A plain user and password, kept as Core keeps them: hashed with a random salt. */
static int add_plain(struct rpc_auth *a, const char *user, const char *pass)
{
	uint8_t raw[16];
	char salt[33], hash[65];
	randombytes_buf(raw, sizeof(raw));
	sodium_bin2hex(salt, sizeof(salt), raw, sizeof(raw));
	hmac_hex(salt, pass, strlen(pass), hash);
	return add_cred(a, user, strlen(user), salt, 32, hash, 64);
}

/* Core's InterpretPermString. */
static int cookie_mode(const char *perms, mode_t *mode)
{
	if (!*perms || strcmp(perms, "owner") == 0)
		*mode = 0600;
	else if (strcmp(perms, "group") == 0)
		*mode = 0640;
	else if (strcmp(perms, "all") == 0)
		*mode = 0644;
	else
		return -1;
	return 0;
}

static int write_cookie(struct rpc_auth *a, const struct peerd_conf *c, mode_t mode, char *pass,
                        char *err, size_t errlen)
{
	const char *f = c->rpccookiefile[0] ? c->rpccookiefile : RPC_COOKIE_NAME;
	size_t n = strlen(c->netdir) + strlen(f) + 2;
	char *path = xmalloc(n), *tmp = xmalloc(n + 4);
	int rc = -1, fd = -1;
	if (!path || !tmp) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	/* Relative paths are prefixed by the network's directory, as Core's AbsPathForConfigVal. */
	if (f[0] == '/')
		snprintf(path, n, "%s", f);
	else
		snprintf(path, n, "%s/%s", c->netdir, f);
	snprintf(tmp, n + 4, "%s.tmp", path);
	uint8_t raw[32];
	randombytes_buf(raw, sizeof(raw));
	sodium_bin2hex(pass, 65, raw, sizeof(raw));
	char text[sizeof(RPC_COOKIE_USER) + 65];
	int tl = snprintf(text, sizeof(text), "%s:%s", RPC_COOKIE_USER, pass);
	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, (size_t)tl) != tl || fchmod(fd, mode) || fsync(fd)) {
		snprintf(err, errlen,
		         "Unable to open cookie authentication file %s for writing: %s", tmp,
		         strerror(errno));
		goto out;
	}
	close(fd);
	fd = -1;
	if (rename(tmp, path)) {
		snprintf(err, errlen, "Unable to rename cookie authentication file %s to %s: %s",
		         tmp, path, strerror(errno));
		(void)unlink(tmp);
		goto out;
	}
	a->cookie_path = path;
	path = NULL;
	rc = 0;
	sodium_memzero(text, sizeof(text));
out:
	if (fd >= 0) {
		close(fd);
		(void)unlink(tmp);
	}
	xfree(path);
	xfree(tmp);
	return rc;
}

int rpc_auth_init(struct rpc_auth *a, const struct peerd_conf *c, char *err, size_t errlen)
{
	memset(a, 0, sizeof(*a));
	a->mode = "none";
	if (errlen)
		err[0] = 0;
	if (!c->rpcpassword[0]) {
		mode_t mode;
		if (cookie_mode(c->rpccookieperms, &mode)) {
			snprintf(err, errlen,
			         "Invalid -rpccookieperms=%s; must be one of 'owner', 'group', or "
			         "'all'.",
			         c->rpccookieperms);
			return -1;
		}
		if (strcmp(c->rpccookiefile, "0") != 0) {
			char pass[65];
			if (write_cookie(a, c, mode, pass, err, errlen))
				return -1;
			int rc = add_plain(a, RPC_COOKIE_USER, pass);
			sodium_memzero(pass, sizeof(pass));
			if (rc) {
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			a->mode = "cookie";
		}
	} else {
		if (add_plain(a, c->rpcuser, c->rpcpassword)) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		a->mode = "rpcuser/rpcpassword";
	}
	for (size_t i = 0; i < c->rpcauth.n; i++) {
		/* user:salt$hash, exactly one ':' and one '$' after it (Core's SplitString). */
		const char *s = c->rpcauth.v[i];
		const char *colon = strchr(s, ':');
		const char *dollar = colon ? strchr(colon + 1, '$') : NULL;
		if (!colon || strchr(colon + 1, ':') || !dollar || strchr(dollar + 1, '$')) {
			snprintf(err, errlen, "Invalid -rpcauth argument.");
			return -1;
		}
		if (add_cred(a, s, (size_t)(colon - s), colon + 1, (size_t)(dollar - colon - 1),
		             dollar + 1, strlen(dollar + 1))) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}
	return 0;
}

void rpc_auth_release(struct rpc_auth *a)
{
	for (size_t i = 0; i < a->n; i++) {
		xfree(a->v[i].user);
		xfree(a->v[i].salt);
		xfree(a->v[i].hash);
	}
	xfree(a->v);
	a->v = NULL;
	a->n = 0;
	if (a->cookie_path) {
		(void)unlink(a->cookie_path);
		xfree(a->cookie_path);
		a->cookie_path = NULL;
	}
}

bool rpc_auth_check(const struct rpc_auth *a, const char *header)
{
	return rpc_auth_user(a, header, NULL, 0);
}

bool rpc_auth_user(const struct rpc_auth *a, const char *header, char *user, size_t cap_user)
{
	if (!header || strncmp(header, "Basic ", 6) != 0)
		return false;
	const char *b = header + 6;
	while (*b == ' ' || *b == '\t')
		b++;
	size_t bl = strlen(b);
	while (bl &&
	       (b[bl - 1] == ' ' || b[bl - 1] == '\t' || b[bl - 1] == '\r' || b[bl - 1] == '\n'))
		bl--;
	/* 4 characters of base64 are 3 bytes; the NUL after them ends the password. */
	size_t cap = bl / 4 * 3 + 3;
	char *up = xmalloc(cap + 1);
	size_t n = 0;
	bool ok = false;
	if (!up)
		return false;
	if (sodium_base642bin((unsigned char *)up, cap, b, bl, NULL, &n, NULL,
	                      sodium_base64_VARIANT_ORIGINAL) == 0) {
		up[n] = 0;
		char *colon = memchr(up, ':', n);
		if (colon && strlen(up) == n) {
			*colon = 0;
			const char *pass = colon + 1;
			for (size_t i = 0; i < a->n; i++) {
				if (!rpc_timing_equal(a->v[i].user, up))
					continue;
				char hash[65];
				hmac_hex(a->v[i].salt, pass, strlen(pass), hash);
				if (rpc_timing_equal(hash, a->v[i].hash))
					ok = true;
			}
			if (ok && user)
				snprintf(user, cap_user, "%s", up);
		}
	}
	sodium_memzero(up, cap + 1);
	xfree(up);
	return ok;
}
