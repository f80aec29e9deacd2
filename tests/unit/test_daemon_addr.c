/*
 * tests/unit/test_daemon_addr.c: addresses in the daemon (daemon/p2p/addr.c,
 * addrrelay.c, peersdat.c) as Core 29's net_processing and addrdb: the
 * token bucket, getaddr's +1,000, no address relay with block-relay-only
 * peers, the getaddr answer (inbound only, once, cached), RelayAddress to
 * two other peers, MaybeSendAddr as addr or addrv2, peers.dat missing /
 * corrupt / newer / round trip, and out of memory at every allocation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <sys/stat.h>
#include "tests/unit/test_daemon_fixture.h"
#include "tests/unit/testutil.h"

/* n fresh addrv2 entries 44.i.1.1:8333 (one /16 each), time now - 60. */
static void addr_msg(struct proto_msg *m, struct proto_addr_entry *v, uint32_t n, uint8_t first)
{
	memset(m, 0, sizeof(*m));
	uint32_t now = (uint32_t)time(NULL);
	for (uint32_t i = 0; i < n; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		v[i].net = PROTO_BIP155_IPV4;
		v[i].addr_len = 4;
		v[i].addr[0] = first;
		v[i].addr[1] = (uint8_t)i;
		v[i].addr[2] = (uint8_t)(i >> 8);
		v[i].addr[3] = 1;
		v[i].port = 8333;
		v[i].time = now - 60;
		v[i].services = PROTO_NODE_NETWORK | PROTO_NODE_WITNESS;
	}
	m->cmd = PROTO_CMD_ADDRV2;
	m->addr.v = v;
	m->addr.n = n;
}

static struct peer *relay_peer(struct tf *t, bool inbound, const char *a)
{
	struct peer *p = tf_peer(t, inbound, a);
	p->connect_ms = daemon_now_ms(t->d);
	return p;
}

static void test_token_bucket(void **state)
{
	struct tf *t = *state;
	struct peer *p = relay_peer(t, true, TF_ADDR);
	static struct proto_addr_entry v[20];
	struct proto_msg m;
	addr_msg(&m, v, 20, 44);
	addr_on_addr(p, &m);
	/* One token at the connection: one processed, 19 rate-limited. */
	assert_true(p->p2p->addr.relay_enabled);
	assert_int_equal(p->p2p->addr.processed, 1);
	assert_int_equal(p->p2p->addr.rate_limited, 19);
	assert_int_equal(addrman_size(t->d->addrman, -1, -1), 1);
	/* 100 seconds later: 10 more tokens (0.1 a second). */
	p->p2p->addr.tokens_at_us -= 100u * 1000000u;
	addr_msg(&m, v, 20, 45);
	addr_on_addr(p, &m);
	assert_int_equal(p->p2p->addr.processed, 11);
	assert_int_equal(p->p2p->addr.rate_limited, 29);
	assert_int_equal(addrman_size(t->d->addrman, -1, -1), 11);
	assert_true(
	    tf_log_contains(t, "Received addr: 20 addresses (10 processed, 10 rate-limited)"));
	/* The bucket holds at most 1,000 however long the wait. */
	p->p2p->addr.tokens = ADDR_TOKEN_BUCKET_MAX - 0.5;
	p->p2p->addr.tokens_at_us -= 100u * 1000000u;
	addr_msg(&m, v, 1, 46);
	addr_on_addr(p, &m);
	assert_true(p->p2p->addr.tokens <= ADDR_TOKEN_BUCKET_MAX - 1 + 0.01);
	assert_true(p->p2p->addr.tokens >= ADDR_TOKEN_BUCKET_MAX - 1 - 0.01);
}

static void test_getaddr_sent_gives_1000_tokens(void **state)
{
	struct tf *t = *state;
	struct peer *p = relay_peer(t, false, TF_ADDR);
	p->conn_type = PEER_CONN_MANUAL;
	struct tf_sent s;
	addr_on_version(p);
	tf_read_sent(t, p->id, &s);
	assert_int_equal(s.count[PROTO_CMD_GETADDR], 1);
	tf_sent_free(&s);
	assert_true(p->p2p->addr.getaddr_sent);
	static struct proto_addr_entry v[1000];
	struct proto_msg m;
	addr_msg(&m, v, 1000, 47);
	addr_on_addr(p, &m);
	assert_int_equal(p->p2p->addr.processed, 1000);
	assert_int_equal(p->p2p->addr.rate_limited, 0);
	/* A full answer may have more to come: still waiting for the answer. */
	assert_true(p->p2p->addr.getaddr_sent);
	addr_msg(&m, v, 1, 48);
	addr_on_addr(p, &m);
	assert_false(p->p2p->addr.getaddr_sent);
}

static void test_block_relay_only_no_address_relay(void **state)
{
	struct tf *t = *state;
	struct peer *p = relay_peer(t, false, TF_ADDR);
	p->conn_type = PEER_CONN_BLOCK_RELAY;
	struct tf_sent s;
	addr_on_version(p);
	tf_read_sent(t, p->id, &s);
	assert_int_equal(s.count[PROTO_CMD_GETADDR], 0);
	tf_sent_free(&s);
	static struct proto_addr_entry v[5];
	struct proto_msg m;
	addr_msg(&m, v, 5, 49);
	addr_on_addr(p, &m);
	assert_false(addr_relay_enabled(p));
	assert_int_equal(p->p2p->addr.processed, 0);
	assert_int_equal(addrman_size(t->d->addrman, -1, -1), 0);
	assert_true(tf_log_contains(t, "ignoring addrv2 message from block-relay-only peer="));
}

static void test_addr_fetch_disconnected_after_answer(void **state)
{
	struct tf *t = *state;
	struct peer *p = relay_peer(t, false, TF_ADDR);
	p->conn_type = PEER_CONN_ADDR_FETCH;
	static struct proto_addr_entry v[2];
	struct proto_msg m;
	addr_msg(&m, v, 1, 50);
	addr_on_addr(p, &m);
	assert_int_equal(p->state, PEER_ACTIVE); /* one address: a self-announcement */
	addr_msg(&m, v, 2, 51);
	addr_on_addr(p, &m);
	assert_int_equal(p->state, PEER_CLOSING);
}

static void fill_addrman(struct tf *t, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct addrman_address a;
		memset(&a, 0, sizeof(a));
		a.svc = addrman_service_ipv4(60, (uint8_t)i, (uint8_t)(i >> 8), 1, 8333);
		a.time = (int64_t)time(NULL) - 100;
		a.services = PROTO_NODE_NETWORK;
		size_t added;
		assert_int_equal(addrman_add(t->d->addrman, &a, 1, &a.svc, 0, a.time + 100, &added),
		                 0);
	}
}

static void test_getaddr_inbound_once_cached(void **state)
{
	struct tf *t = *state;
	fill_addrman(t, 200);
	unsigned total = (unsigned)addrman_size(t->d->addrman, -1, -1);
	assert_true(total > 150);
	struct peer *out = relay_peer(t, false, TF_ADDR);
	struct peer *in = relay_peer(t, true, TF_ADDR);
	struct tf_sent s;
	addr_on_getaddr(out, NULL);
	tf_read_sent(t, out->id, &s);
	assert_int_equal(s.count[PROTO_CMD_ADDR] + s.count[PROTO_CMD_ADDRV2], 0);
	tf_sent_free(&s);
	assert_true(tf_log_contains(t, "Ignoring \"getaddr\" from manual connection."));
	addr_on_getaddr(in, NULL);
	tf_read_sent(t, in->id, &s);
	assert_int_equal(s.count[PROTO_CMD_ADDR], 1); /* v1: did not send sendaddrv2 */
	tf_sent_free(&s);
	addr_on_getaddr(in, NULL);
	tf_read_sent(t, in->id, &s);
	assert_int_equal(s.count[PROTO_CMD_ADDR], 0);
	tf_sent_free(&s);
	assert_true(tf_log_contains(t, "Ignoring repeated \"getaddr\"."));
	/* One cache for one local socket: 23 % of the addrman. */
	assert_int_equal(t->d->addr->n_caches, 1);
	assert_int_equal(t->d->addr->caches[0].n, total * 23 / 100);
	struct peer *in2 = relay_peer(t, true, TF_ADDR);
	in2->sendaddrv2 = true;
	addr_on_getaddr(in2, NULL);
	tf_read_sent(t, in2->id, &s);
	assert_int_equal(s.count[PROTO_CMD_ADDRV2], 1);
	tf_sent_free(&s);
	assert_int_equal(t->d->addr->n_caches, 1);
}

static void test_relay_to_two_other_peers(void **state)
{
	struct tf *t = *state;
	struct peer *q[4];
	for (int i = 0; i < 4; i++) {
		q[i] = relay_peer(t, true, TF_ADDR);
		assert_true(addr_setup_relay(q[i]));
	}
	struct peer *from = q[0];
	static struct proto_addr_entry v[1];
	struct proto_msg m;
	addr_msg(&m, v, 1, 52);
	addr_on_addr(from, &m);
	unsigned got = 0;
	for (int i = 1; i < 4; i++)
		got += q[i]->p2p->addr.n_to_send;
	assert_int_equal(got, 2);
	assert_int_equal(from->p2p->addr.n_to_send, 0);
	/* An 11-entry message is not relayed; nor is an old address. */
	for (int i = 0; i < 4; i++)
		q[i]->p2p->addr.n_to_send = 0;
	static struct proto_addr_entry w[11];
	struct peer *rich = relay_peer(t, true, TF_ADDR);
	rich->p2p->addr.started = true;
	rich->p2p->addr.tokens = 100;
	rich->p2p->addr.tokens_at_us = (uint64_t)daemon_time_ms(t->d) * 1000u;
	addr_msg(&m, w, 11, 53);
	addr_on_addr(rich, &m);
	addr_msg(&m, w, 1, 54);
	w[0].time = (uint32_t)time(NULL) - 3600;
	addr_on_addr(rich, &m);
	for (int i = 0; i < 4; i++)
		assert_int_equal(q[i]->p2p->addr.n_to_send, 0);
}

static void test_send_queue_as_addr_or_addrv2(void **state)
{
	struct tf *t = *state;
	struct peer *v1 = relay_peer(t, true, TF_ADDR), *v2 = relay_peer(t, true, TF_ADDR);
	v2->sendaddrv2 = true;
	assert_true(addr_setup_relay(v1) && addr_setup_relay(v2));
	struct addrman_address a;
	memset(&a, 0, sizeof(a));
	a.svc = addrman_service_ipv4(61, 1, 1, 1, 8333);
	a.time = (int64_t)time(NULL);
	a.services = PROTO_NODE_NETWORK;
	struct addrman_address onion = a;
	uint8_t key[32];
	memset(key, 7, sizeof(key));
	assert_int_equal(addrman_service_from_bip155(PROTO_BIP155_TORV3, key, 32, 9050, &onion.svc),
	                 0);
	for (int k = 0; k < 2; k++) {
		struct peer *p = k ? v2 : v1;
		addrrelay_push(p, &a);
		addrrelay_push(p, &onion);
		addrrelay_push(p, &a); /* a duplicate is sent once */
	}
	/* addr (v1) cannot carry Tor: only one address queued for v1. */
	assert_int_equal(v1->p2p->addr.n_to_send, 2);
	assert_int_equal(v2->p2p->addr.n_to_send, 3);
	uint64_t now = daemon_now_ms(t->d) + 1;
	addrrelay_tick(v1, now);
	addrrelay_tick(v2, now);
	struct tf_sent s;
	tf_read_sent(t, v1->id, &s);
	assert_int_equal(s.count[PROTO_CMD_ADDR], 1);
	assert_int_equal(s.count[PROTO_CMD_ADDRV2], 0);
	tf_sent_free(&s);
	tf_read_sent(t, v2->id, &s);
	assert_int_equal(s.count[PROTO_CMD_ADDRV2], 1);
	tf_sent_free(&s);
	/* Known to it now: pushing again queues nothing. */
	addrrelay_push(v2, &a);
	assert_int_equal(v2->p2p->addr.n_to_send, 0);
	/* And the next send waits for the Poisson timer (mean 30 s). */
	assert_true(v2->p2p->addr.next_send_us > now * 1000u);
}

static void peers_path(struct tf *t, const char *suffix, char *out, size_t cap)
{
	snprintf(out, cap, "%s/peers.dat%s", t->dir, suffix);
}

static void test_peers_dat(void **state)
{
	struct tf *t = *state;
	char path[256], bak[256];
	peers_path(t, "", path, sizeof(path));
	peers_path(t, ".bak", bak, sizeof(bak));
	/* Missing: created at once. */
	assert_int_equal(peersdat_load(t->d), 0);
	assert_true(tf_log_contains(t, "Creating peers.dat because the file was not found"));
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	/* Written again by the tick once 15 minutes (DUMP_PEERS_INTERVAL) are up. */
	unlink(path);
	uint64_t due = t->d->addr->next_dump_ms;
	assert_true(due >= daemon_now_ms(t->d) + 15u * 60u * 1000u - 1000u);
	peersdat_tick(t->d, due - 1);
	assert_int_not_equal(stat(path, &st), 0);
	peersdat_tick(t->d, due);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(t->d->addr->next_dump_ms, due + 15u * 60u * 1000u);
	/* Round trip: 100 addresses out and back. */
	fill_addrman(t, 100);
	size_t n = addrman_size(t->d->addrman, -1, -1);
	assert_int_equal(peersdat_dump(t->d), 0);
	addrman_free(t->d->addrman);
	t->d->addrman = addrman_new(false, 0);
	assert_int_equal(peersdat_load(t->d), 0);
	assert_int_equal(addrman_size(t->d->addrman, -1, -1), n);
	/* Newer format: moved aside, a new empty one. */
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, 4, SEEK_SET), 0);
	fputc(5, f);
	fputc(32 + 5, f);
	fclose(f);
	addrman_free(t->d->addrman);
	t->d->addrman = addrman_new(false, 0);
	assert_int_equal(peersdat_load(t->d), 0);
	assert_int_equal(stat(bak, &st), 0);
	assert_int_equal(addrman_size(t->d->addrman, -1, -1), 0);
	assert_true(tf_log_contains(t, "Original backed up to peers.dat.bak"));
	unlink(bak);
	/* Corrupt: refused with Core's text. */
	f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, -1, SEEK_END), 0);
	fputc(0x55, f);
	fclose(f);
	assert_true(peersdat_load(t->d) < 0);
	assert_true(tf_log_contains(t, "Invalid or corrupt peers.dat (Checksum mismatch"));
}

/* Every allocation of intake, getaddr, relay and the send fails in turn:
 * nothing crashes, nothing leaks (the sanitizers and tf_free check). */
static void test_out_of_memory(void **state)
{
	(void)state;
	for (long k = 0; k < 40; k++) {
		struct tf *t = tf_new();
		fill_addrman(t, 30);
		struct peer *in = relay_peer(t, true, TF_ADDR), *q = relay_peer(t, true, TF_ADDR);
		assert_true(addr_setup_relay(q));
		static struct proto_addr_entry v[3];
		struct proto_msg m;
		addr_msg(&m, v, 3, 55);
		base_alloc_fail_after(k);
		addr_on_getaddr(in, NULL);
		addr_on_addr(in, &m);
		addrrelay_tick(q, daemon_now_ms(t->d) + 1);
		base_alloc_fail_after(-1);
		tf_free(t);
	}
}

int main(void)
{
	tf_global_init();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_token_bucket, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_getaddr_sent_gives_1000_tokens, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_block_relay_only_no_address_relay, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_addr_fetch_disconnected_after_answer, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_getaddr_inbound_once_cached, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_relay_to_two_other_peers, tf_setup, tf_teardown),
	    cmocka_unit_test_setup_teardown(test_send_queue_as_addr_or_addrv2, tf_setup,
	                                    tf_teardown),
	    cmocka_unit_test_setup_teardown(test_peers_dat, tf_setup, tf_teardown),
	    cmocka_unit_test(test_out_of_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
