package io.quorumkv.service.support;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import io.netty.handler.ssl.SslContext;
import io.quorumkv.service.support.TestCertificates.Authority;
import io.quorumkv.service.support.TestCertificates.Issued;

/**
 * TLS settings of test nodes on loopback: a CA made for the test, one node certificate
 * for {@code 127.0.0.1} shared by every node (naming the node identity
 * {@code spiffe://tls-test-cluster/node/test-node}), PEM files in a folder, and the node
 * properties that put the public and internal API and the calls to peers on TLS through
 * one SSL bundle, {@code quorumkv}, reloaded when its files change.
 *
 * @param folder where the PEM files are
 * @param authority the test CA
 * @param node the nodes' certificate
 * @param mutual whether the nodes prove themselves with their certificate (then no
 * cluster secret is set)
 */
public record TestTls(Path folder, Authority authority, Issued node, boolean mutual) {

	public static final String BUNDLE = "quorumkv";

	/** The cluster id of test nodes on TLS ({@code quorumkv.cluster.id}). */
	public static final String CLUSTER_ID = "tls-test-cluster";

	/**
	 * The subject alternative names of a node's certificate: the loopback host (for the
	 * callers' host check) and the node identity of the cluster.
	 */
	public static final String[] NODE_NAMES = { "127.0.0.1", "localhost",
			"spiffe://" + CLUSTER_ID + "/node/test-node" };

	/** A new CA and node certificate, written to {@code folder}. */
	public static TestTls create(Path folder, boolean mutual) {
		Authority authority = Authority.create("QuorumKV test CA");
		Issued node = authority.issue("quorumkv-node", NODE_NAMES);
		authority.writePem(folder, "ca");
		node.writePem(folder, "node");
		return new TestTls(folder, authority, node, mutual);
	}

	/** Node properties: server and peer TLS through the bundle. */
	public Map<String, String> properties() {
		Map<String, String> properties = new LinkedHashMap<>();
		String prefix = "spring.ssl.bundle.pem." + BUNDLE + ".";
		properties.put(prefix + "keystore.certificate", "file:" + this.folder.resolve("node.crt"));
		properties.put(prefix + "keystore.private-key", "file:" + this.folder.resolve("node.key"));
		properties.put(prefix + "truststore.certificate", "file:" + this.folder.resolve("ca.crt"));
		properties.put(prefix + "reload-on-update", "true");
		properties.put("spring.ssl.bundle.watch.file.quiet-period", "200ms");
		properties.put("server.ssl.bundle", BUNDLE);
		properties.put("quorumkv.cluster.tls.bundle", BUNDLE);
		if (this.mutual) {
			properties.put("server.ssl.client-auth", "want");
			properties.put("quorumkv.cluster.tls.mutual", "true");
			properties.put("quorumkv.cluster.id", CLUSTER_ID);
		}
		return properties;
	}

	/** A client that trusts the test CA and presents no certificate. */
	public SslContext anonymousClient() {
		return this.authority.clientContext(null);
	}

	/** A client that trusts the test CA and presents the nodes' certificate. */
	public SslContext nodeClient() {
		return this.authority.clientContext(this.node);
	}

}
