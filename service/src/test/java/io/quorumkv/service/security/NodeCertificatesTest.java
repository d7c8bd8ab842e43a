package io.quorumkv.service.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.security.cert.X509Certificate;

import io.quorumkv.service.support.TestCertificates.Authority;
import io.quorumkv.service.support.TestCertificates.Issued;
import org.junit.jupiter.api.Test;

/** Which subject alternative names name a node of the cluster {@code c1}. */
class NodeCertificatesTest {

	private static final Authority CA = Authority.create("node-certificates test CA");

	private final NodeCertificates nodes = new NodeCertificates(() -> "c1");

	@Test
	void onlyANodeUriOfThisClusterNamesANode() {
		assertThat(NodeCertificates.isNodeOf("spiffe://c1/node/n-1.a_b", "c1")).isTrue();
		assertThat(NodeCertificates.isNodeOf("spiffe://c2/node/n1", "c1")).isFalse();
		assertThat(NodeCertificates.isNodeOf("spiffe://C1/node/n1", "c1")).isFalse();
		assertThat(NodeCertificates.isNodeOf("https://c1/node/n1", "c1")).isFalse();
		assertThat(NodeCertificates.isNodeOf("spiffe://c1/app/n1", "c1")).isFalse();
		assertThat(NodeCertificates.isNodeOf("spiffe://c1/node/", "c1")).isFalse();
		assertThat(NodeCertificates.isNodeOf("spiffe://c1/node/n1/x", "c1")).isFalse();
		assertThat(NodeCertificates.isNodeOf("spiffe://c1/node/n1?x=1", "c1")).isFalse();
		assertThat(NodeCertificates.isNodeOf("spiffe://c1/node/n1#x", "c1")).isFalse();
		assertThat(NodeCertificates.isNodeOf("spiffe://user@c1/node/n1", "c1")).isFalse();
		assertThat(NodeCertificates.isNodeOf("spiffe://c1:1/node/n1", "c1")).isFalse();
		assertThat(NodeCertificates.isNodeOf("not a uri", "c1")).isFalse();
	}

	@Test
	void aCertificateIsANodesByItsUriAlone() {
		assertThat(this.nodes.isNode(chain(CA.issue("quorumkv-node", "spiffe://c1/node/n1")))).isTrue();
		assertThat(this.nodes.isNode(chain(CA.issue("spiffe://c1/node/n1", "127.0.0.1")))).isFalse();
		assertThat(this.nodes.isNode(chain(CA.issue("127.0.0.1")))).isFalse();
		assertThat(this.nodes.isNode(chain(CA.issue("quorumkv-node", "127.0.0.1", "localhost")))).isFalse();
		assertThat(this.nodes.isNode(null)).isFalse();
		assertThat(this.nodes.isNode(new X509Certificate[0])).isFalse();
	}

	@Test
	void aNodeWithoutAClusterIdTakesNoCertificateForANode() {
		NodeCertificates unnamed = new NodeCertificates(() -> null);
		assertThat(unnamed.isNode(chain(CA.issue("quorumkv-node", "spiffe://c1/node/n1")))).isFalse();
	}

	private static X509Certificate[] chain(Issued issued) {
		return new X509Certificate[] { issued.certificate(), issued.issuer() };
	}

}
