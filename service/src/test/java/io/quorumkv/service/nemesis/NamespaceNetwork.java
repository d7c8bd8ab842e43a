package io.quorumkv.service.nemesis;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;

import io.quorumkv.service.support.RequiredTool;

/**
 * Each node in a network namespace of its own ({@code qkn<id>-<n>}), joined by a veth
 * link to a bridge in the root namespace, which has an address on the bridge too: the
 * test JVM reaches every node at {@code 10.a.b.(n+1)}, nodes bind to their own address,
 * and a cut between nodes never cuts a client. Cuts are firewall rules in the receiving
 * node's namespace ({@code nft}: drop what comes from the other side; a one-way cut drops
 * only the packets of {@code from}'s requests, to {@code to}'s port, so {@code to}'s own
 * calls to {@code from} and their answers pass). Without {@code nft} the cuts are
 * blackhole routes in the sending namespace: a one-way cut then stops {@code to}'s
 * answers to {@code from} too, which breaks TCP both ways, and says so.
 */
final class NamespaceNetwork implements Network {

	private final String id;

	private final String subnet;

	private final int size;

	private final int port;

	private final boolean nft;

	private final List<String> namespaces = new ArrayList<>();

	private final Thread cleanup = new Thread(this::destroy, "namespace-network-cleanup");

	private NamespaceNetwork(String id, String subnet, int size, int port, boolean nft) {
		this.id = id;
		this.subnet = subnet;
		this.size = size;
		this.port = port;
		this.nft = nft;
	}

	/**
	 * Creates the namespaces, links and bridge; empty (having removed what it made) when
	 * this machine does not allow it, with the reason printed.
	 */
	static Optional<NamespaceNetwork> create(int size, int port, Random random) {
		if (!Sh.has("ip")) {
			System.out.println("NamespaceNetwork: no `ip` (iproute2) on this machine");
			return Optional.empty();
		}
		String id = Integer.toHexString(0x1000 + random.nextInt(0xefff));
		String subnet = freeSubnet(random);
		boolean nft = RequiredTool.orFallBack(Sh.has("nft"),
				"nft (apt-get install nftables): one-way cuts, which blackhole routes make two-way");
		NamespaceNetwork network = new NamespaceNetwork(id, subnet, size, port, nft);
		Runtime.getRuntime().addShutdownHook(network.cleanup);
		try {
			network.build();
			return Optional.of(network);
		}
		catch (IllegalStateException ex) {
			System.out.println("NamespaceNetwork: cannot create network namespaces here: " + ex.getMessage());
			network.close();
			return Optional.empty();
		}
	}

	private static String freeSubnet(Random random) {
		String routes = Sh.run("ip", "-4", "route", "show").output() + Sh.run("ip", "-4", "addr").output();
		for (int attempt = 0; attempt < 50; attempt++) {
			String subnet = "10." + (150 + random.nextInt(100)) + "." + random.nextInt(256) + ".";
			if (!routes.contains(subnet)) {
				return subnet;
			}
		}
		throw new IllegalStateException("no free 10.x.y.0/24 subnet found");
	}

	private String bridge() {
		return "qkb" + this.id;
	}

	private String namespace(int node) {
		return "qkn" + this.id + "-" + node;
	}

	private void build() {
		Sh.must("ip", "link", "add", bridge(), "type", "bridge");
		Sh.must("ip", "addr", "add", this.subnet + "254/24", "dev", bridge());
		Sh.must("ip", "link", "set", bridge(), "up");
		for (int node = 0; node < this.size; node++) {
			String ns = namespace(node);
			String outside = "qkv" + this.id + node;
			String inside = "qkp" + this.id + node;
			Sh.must("ip", "netns", "add", ns);
			this.namespaces.add(ns);
			Sh.must("ip", "link", "add", outside, "type", "veth", "peer", "name", inside);
			Sh.must("ip", "link", "set", inside, "netns", ns);
			Sh.must("ip", "link", "set", outside, "master", bridge());
			Sh.must("ip", "link", "set", outside, "up");
			Sh.must("ip", "-n", ns, "addr", "add", host(node) + "/24", "dev", inside);
			Sh.must("ip", "-n", ns, "link", "set", inside, "up");
			Sh.must("ip", "-n", ns, "link", "set", "lo", "up");
			if (this.nft) {
				Sh.must("ip", "netns", "exec", ns, "nft", "add", "table", "inet", "qkv");
				Sh.must("ip", "netns", "exec", ns, "nft",
						"add chain inet qkv input { type filter hook input priority 0 ; policy accept ; }");
			}
		}
	}

	@Override
	public String describe() {
		return "network namespaces " + namespace(0) + ".." + (this.size - 1) + " on bridge " + bridge() + " ("
				+ this.subnet + "0/24, the test JVM at " + this.subnet + "254), cuts by "
				+ (this.nft ? "nft rules (one-way cuts are real)"
						: "blackhole routes (no nft: one-way cuts cut both ways)");
	}

	@Override
	public String host(int node) {
		return this.subnet + (node + 1);
	}

	@Override
	public String peerUrl(int node, int port) {
		return "http://" + host(node) + ":" + port;
	}

	@Override
	public List<String> commandPrefix(int node) {
		return List.of("ip", "netns", "exec", namespace(node));
	}

	@Override
	public void partition(List<Set<Integer>> sides) {
		for (Set<Integer> a : sides) {
			for (Set<Integer> b : sides) {
				if (a == b) {
					continue;
				}
				for (int from : a) {
					for (int to : b) {
						drop(from, to, false);
					}
				}
			}
		}
	}

	@Override
	public void cutOneWay(int from, int to) {
		drop(from, to, true);
	}

	@Override
	public boolean oneWayIsReal() {
		return this.nft;
	}

	/** Drops what {@code from} sends to {@code to} (only its requests when one-way). */
	private void drop(int from, int to, boolean requestsOnly) {
		if (this.nft) {
			String rule = "add rule inet qkv input ip saddr " + host(from)
					+ (requestsOnly ? " tcp dport " + this.port : "") + " drop";
			Sh.must("ip", "netns", "exec", namespace(to), "nft", rule);
		}
		else {
			Sh.run("ip", "-n", namespace(from), "route", "add", "blackhole", host(to) + "/32");
		}
	}

	@Override
	public void heal() {
		for (int node = 0; node < this.size; node++) {
			if (this.nft) {
				Sh.must("ip", "netns", "exec", namespace(node), "nft", "flush", "chain", "inet", "qkv", "input");
			}
			else {
				for (int other = 0; other < this.size; other++) {
					Sh.run("ip", "-n", namespace(node), "route", "del", "blackhole", host(other) + "/32");
				}
			}
		}
	}

	private void destroy() {
		for (String ns : this.namespaces) {
			Sh.run("ip", "netns", "del", ns);
		}
		this.namespaces.clear();
		Sh.run("ip", "link", "del", bridge());
	}

	@Override
	public void close() {
		destroy();
		try {
			Runtime.getRuntime().removeShutdownHook(this.cleanup);
		}
		catch (IllegalStateException ex) {
			// shutting down already
		}
	}

}
