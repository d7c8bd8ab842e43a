package io.quorumkv.service.nemesis;

import java.util.List;
import java.util.Set;

/**
 * How the nodes reach each other, and how the nemesis cuts them apart: network namespaces
 * joined by a bridge ({@link NamespaceNetwork}), or, where namespaces cannot be created,
 * a {@link io.quorumkv.service.support.FaultProxy} in front of each node
 * ({@link ProxyNetwork}). Clients (the test JVM) reach every node whatever is cut.
 */
sealed interface Network extends AutoCloseable permits NamespaceNetwork, ProxyNetwork {

	/** Which mechanism this is, printed by every run. */
	String describe();

	/** The address a node binds to and clients use. */
	String host(int node);

	/** The URL a node's peers know it by ({@code quorumkv.cluster.nodes}). */
	String peerUrl(int node, int port);

	/** What a node's command line starts with (entering its namespace), if anything. */
	List<String> commandPrefix(int node);

	/** Cuts every link between the sides, both ways; each node is in one side. */
	void partition(List<Set<Integer>> sides);

	/**
	 * Cuts only {@code from}'s requests to {@code to}: {@code to} still reaches
	 * {@code from}.
	 */
	void cutOneWay(int from, int to);

	/** Whether {@link #cutOneWay} is a real one-way cut (else it cuts both ways). */
	boolean oneWayIsReal();

	/** Heals every cut. */
	void heal();

	@Override
	void close();

}
