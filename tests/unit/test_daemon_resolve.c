/*
 * tests/unit/test_daemon_resolve.c: name lookups on the loop
 * (daemon/net/resolve.c, c-ares): an IP literal answers on the next loop
 * turn, never inside net_resolve; a cancelled lookup never calls back; with
 * dnsserver= the question goes to that server (a UDP socket of the test,
 * which answers it by hand: addresses, NXDOMAIN) and the port asked for is
 * on every address; at most `max` addresses; a callback may start the next
 * lookup; stopping the resolver with a lookup in flight drops it and
 * leaves no handle open.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/net/net.h"
#include "tests/unit/test_daemon_fixture.h"

struct result {
	int calls;
	int status;
	size_t n;
	union net_addr addrs[8];
};

static void on_result(void *ctx, int status, const union net_addr *addrs, size_t n)
{
	struct result *r = ctx;
	r->calls++;
	r->status = status;
	r->n = n;
	for (size_t i = 0; i < n && i < 8; i++)
		r->addrs[i] = addrs[i];
}

/* Run the loop until cond or about 2 s. */
#define RUN_UNTIL(t, cond)                                                                         \
	do {                                                                                       \
		for (int i_ = 0; i_ < 2000 && !(cond); i_++) {                                     \
			uv_run(&(t)->loop, UV_RUN_NOWAIT);                                         \
			usleep(1000);                                                              \
		}                                                                                  \
	} while (0)

static void test_ip_literal_answers_later(void **state)
{
	struct tf *t = *state;
	assert_int_equal(net_resolver_init(t->d), 0);
	struct result r = {0};
	struct net_resolve *q = net_resolve(t->d, "127.0.0.5", 8333, 4, on_result, &r);
	assert_non_null(q);
	/* c-ares knows the answer at once; the caller still hears it later. */
	assert_int_equal(r.calls, 0);
	RUN_UNTIL(t, r.calls);
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.n, 1);
	char s[NET_ADDRSTRLEN];
	net_addr_format(&r.addrs[0], s);
	assert_string_equal(s, "127.0.0.5:8333");
	/* Cancelled before the next loop turn: never called. */
	struct result r2 = {0};
	q = net_resolve(t->d, "::1", 1, 4, on_result, &r2);
	assert_non_null(q);
	net_resolve_cancel(q);
	for (int i = 0; i < 20; i++)
		uv_run(&t->loop, UV_RUN_NOWAIT);
	assert_int_equal(r2.calls, 0);
	net_resolver_release(t->d);
}

/* A DNS server of the test's: a UDP socket on loopback. */
static int udp_server(uint16_t *port)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	socklen_t len = sizeof(a);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* Wait (running the loop, so c-ares sends) for one question; its name in
 * dotted form into name, its type returned; the packet kept for the reply. */
static int next_question(struct tf *t, int fd, uint8_t *pkt, ssize_t *len, struct sockaddr_in *from,
                         char *name, size_t cap)
{
	for (int i = 0; i < 2000; i++) {
		uv_run(&t->loop, UV_RUN_NOWAIT);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 1) == 1)
			break;
	}
	socklen_t fl = sizeof(*from);
	*len = recvfrom(fd, pkt, 512, MSG_DONTWAIT, (struct sockaddr *)from, &fl);
	if (*len < 17)
		fail_msg("no DNS question arrived at the test's server (%zd)", *len);
	size_t o = 12, w = 0;
	while (pkt[o] && o < (size_t)*len) {
		size_t l = pkt[o];
		if (w)
			name[w++] = '.';
		assert_true(w + l + 1 < cap);
		memcpy(name + w, pkt + o + 1, l);
		w += l;
		o += 1 + l;
	}
	name[w] = '\0';
	return pkt[o + 1] << 8 | pkt[o + 2];
}

/* The question back as an answer: rcode, and n A records of 127.0.0.(10+i). */
static void reply(int fd, uint8_t *pkt, ssize_t len, const struct sockaddr_in *to, int rcode,
                  int qtype, int n)
{
	uint8_t out[512];
	memcpy(out, pkt, (size_t)len);
	out[2] = 0x81; /* QR, RD */
	out[3] = (uint8_t)(0x80 | rcode);
	out[6] = 0;
	out[7] = (uint8_t)(qtype == 1 ? n : 0);
	out[8] = out[9] = out[10] = out[11] = 0;
	size_t o = (size_t)len;
	for (int i = 0; qtype == 1 && i < n; i++) {
		const uint8_t rr[] = {0xc0, 12, 0, 1, 0,   1, 0, 0,
		                      0,    60, 0, 4, 127, 0, 0, (uint8_t)(10 + i)};
		memcpy(out + o, rr, sizeof(rr));
		o += sizeof(rr);
	}
	assert_int_equal(sendto(fd, out, o, 0, (const struct sockaddr *)to, sizeof(*to)),
	                 (ssize_t)o);
}

/* Answer the A and AAAA questions of one lookup of `want`. */
static void answer_lookup(struct tf *t, int fd, const char *want, int rcode, int n_a)
{
	for (int k = 0; k < 2; k++) {
		uint8_t pkt[512];
		ssize_t len;
		struct sockaddr_in from;
		char name[256];
		int qtype = next_question(t, fd, pkt, &len, &from, name, sizeof(name));
		assert_string_equal(name, want);
		assert_true(qtype == 1 || qtype == 28);
		reply(fd, pkt, len, &from, rcode, qtype, n_a);
	}
}

struct chain {
	struct tf *t;
	struct result first, second;
};

static void on_first_start_second(void *ctx, int status, const union net_addr *addrs, size_t n)
{
	struct chain *c = ctx;
	on_result(&c->first, status, addrs, n);
	assert_non_null(net_resolve(c->t->d, "second.test.", 1, 8, on_result, &c->second));
}

static void test_dnsserver_gets_every_question(void **state)
{
	struct tf *t = *state;
	uint16_t port;
	int fd = udp_server(&port);
	snprintf(t->conf.dnsserver, sizeof(t->conf.dnsserver), "127.0.0.1:%u", (unsigned)port);
	assert_int_equal(net_resolver_init(t->d), 0);

	/* Five A records, three wanted: the first three, each with the port. */
	struct result r = {0};
	assert_non_null(net_resolve(t->d, "x9.seed.test.", 8333, 3, on_result, &r));
	answer_lookup(t, fd, "x9.seed.test", 0, 5);
	RUN_UNTIL(t, r.calls);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.n, 3);
	for (size_t i = 0; i < 3; i++) {
		char s[NET_ADDRSTRLEN];
		net_addr_format(&r.addrs[i], s);
		char want[32];
		snprintf(want, sizeof(want), "127.0.0.%zu:8333", 10 + i);
		assert_string_equal(s, want);
	}

	/* NXDOMAIN is an answer with no address; a callback may look up more. */
	struct chain c = {.t = t};
	assert_non_null(net_resolve(t->d, "first.test.", 1, 8, on_first_start_second, &c));
	answer_lookup(t, fd, "first.test", 3, 0);
	RUN_UNTIL(t, c.first.calls);
	assert_int_equal(c.first.status, 0);
	assert_int_equal(c.first.n, 0);
	answer_lookup(t, fd, "second.test", 0, 1);
	RUN_UNTIL(t, c.second.calls);
	assert_int_equal(c.second.n, 1);

	/* Stopped with a lookup in flight: dropped, no call, no handle left
	 * (tf_free closes the loop and fails on an open handle). */
	struct result r3 = {0};
	assert_non_null(net_resolve(t->d, "never.test.", 1, 8, on_result, &r3));
	uint8_t pkt[512];
	ssize_t len;
	struct sockaddr_in from;
	char name[256];
	next_question(t, fd, pkt, &len, &from, name, sizeof(name));
	assert_string_equal(name, "never.test");
	net_resolver_release(t->d);
	for (int i = 0; i < 20; i++)
		uv_run(&t->loop, UV_RUN_NOWAIT);
	assert_int_equal(r3.calls, 0);
	assert_null(net_resolve(t->d, "late.test.", 1, 8, on_result, &r3));
	close(fd);
}

static void test_bad_dnsserver(void **state)
{
	struct tf *t = *state;
	snprintf(t->conf.dnsserver, sizeof(t->conf.dnsserver), "not-an-address");
	assert_int_equal(net_resolver_init(t->d), -EINVAL);
	assert_true(tf_log_contains(t, "dnsserver=not-an-address"));
	assert_null(t->d->net->resolver);
}

int main(void)
{
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_ip_literal_answers_later, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_dnsserver_gets_every_question, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_bad_dnsserver, tf_setup, tf_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
