package io.quorumkv.service.nemesis;

import java.util.List;
import java.util.Set;
import java.util.function.LongToIntFunction;

import io.quorumkv.service.support.FaultProxy;

/**
 * The fallback where network namespaces cannot be created: nodes on loopback, each
 * reached by its peers through a {@link FaultProxy} (its id in
 * {@code quorumkv.cluster.nodes} is the proxy's URL) that blackholes the connections a
 * given node opens. A cut from {@code a} to {@code b} blocks {@code a} at {@code b}'s
 * proxy, so one-way cuts are real; clients talk to the nodes directly.
 */
final class ProxyNetwork implements Network {

	private final FaultProxy[] proxies;

	ProxyNetwork(int[] ports, LongToIntFunction nodeOfPid) {
		this.proxies = new FaultProxy[ports.length];
		for (int i = 0; i < ports.length; i++) {
			this.proxies[i] = new FaultProxy(ports[i], nodeOfPid);
		}
	}

	@Override
	public String describe() {
		return "FaultProxy in front of each node on loopback (connections blackholed by the opening node's pid)";
	}

	@Override
	public String host(int node) {
		return "127.0.0.1";
	}

	@Override
	public String peerUrl(int node, int port) {
		return "http://127.0.0.1:" + this.proxies[node].port();
	}

	@Override
	public List<String> commandPrefix(int node) {
		return List.of();
	}

	@Override
	public void partition(List<Set<Integer>> sides) {
		for (Set<Integer> a : sides) {
			for (Set<Integer> b : sides) {
				if (a != b) {
					for (int from : a) {
						for (int to : b) {
							this.proxies[to].block(from);
						}
					}
				}
			}
		}
	}

	@Override
	public void cutOneWay(int from, int to) {
		this.proxies[to].block(from);
	}

	@Override
	public boolean oneWayIsReal() {
		return true;
	}

	@Override
	public void heal() {
		for (FaultProxy proxy : this.proxies) {
			proxy.heal();
		}
	}

	@Override
	public void close() {
		for (FaultProxy proxy : this.proxies) {
			proxy.close();
		}
	}

}
