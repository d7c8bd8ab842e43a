package io.quorumkv.service.http;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Map;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLSocket;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.support.StreamCalls;
import io.quorumkv.service.support.TestCertificates.Authority;
import io.quorumkv.service.support.TestCertificates.Issued;
import io.quorumkv.service.support.TestClients;
import io.quorumkv.service.support.TestCluster;
import io.quorumkv.service.support.TestTls;
import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * TLS with certificates made for the test: who is refused (a client that does not trust
 * the cluster's CA, a caller with another CA's certificate, a certificate of the right CA
 * issued to something else than a node), and certificates reloaded without a restart, on
 * the server side and on the side of the calls to peers.
 */
class TlsTest {

	@TempDir
	static Path root;

	static TestTls tls;

	static TestCluster cluster;

	@BeforeAll
	static void start() {
		tls = TestTls.create(root.resolve("tls"), true);
		cluster = new TestCluster(root, 2, Map.of(), tls).startAll();
	}

	@AfterAll
	static void stop() {
		if (cluster != null) {
			cluster.close();
		}
	}

	@Test
	void aClientThatDoesNotTrustTheClusterCaIsRefused() throws Exception {
		double failedBefore = handshakeFailures();
		// The JDK's default trust store does not know the test CA.
		WebTestClient untrusting = TestClients.forUrl(cluster.url(0),
				io.netty.handler.ssl.SslContextBuilder.forClient().build());
		// Netty's OpenSSL engine wraps the trust manager's refusal: it is a cause.
		assertThatThrownBy(() -> untrusting.get().uri("/v0/status").exchange())
			.hasStackTraceContaining("PKIX path building failed");
		// Plain HTTP on the TLS port is answered 400 in plain HTTP, saying to use TLS.
		TestClients.forPort(cluster.port(0))
			.get()
			.uri("/v0/status")
			.exchange()
			.expectStatus()
			.isBadRequest()
			.expectBody(String.class)
			.isEqualTo("this port speaks TLS: use https://\n");
		cluster.client(0).get().uri("/v0/status").exchange().expectStatus().isOk();
		// Both are counted, each once (and logged, at a rate limit).
		eventually(Duration.ofSeconds(10), () -> assertThat(handshakeFailures()).isEqualTo(failedBefore + 2));
	}

	private static double handshakeFailures() {
		Counter counter = cluster.bean(0, MeterRegistry.class).find("quorumkv.tls.handshake.failures").counter();
		return (counter != null) ? counter.count() : 0;
	}

	private static double refused(String reason) {
		Counter counter = cluster.bean(0, MeterRegistry.class)
			.find("quorumkv.internal.refused")
			.tag("reason", reason)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	@Test
	void aPeerWithAnotherCasCertificateIsRefused() {
		Authority stranger = Authority.create("another CA");
		Issued impostor = stranger.issue("quorumkv-node", "127.0.0.1");
		// It trusts the cluster's CA, but presents a certificate of another.
		WebTestClient client = TestClients.forUrl(cluster.url(0), withKey(impostor));
		assertThatThrownBy(() -> client.get()
			.uri(cluster.uri(0, InternalApi.ENTRIES_PATH + "?start=k"))
			.exchange()
			.expectStatus()
			.isOk()).isInstanceOf(Throwable.class);
	}

	@Test
	void aCertificateOfTheClusterCaIssuedToAnotherNameIsNoNode() {
		Issued application = tls.authority().issue("billing-app", "billing.example.com");
		WebTestClient client = TestClients.forUrl(cluster.url(0), withKey(application));
		client.post()
			.uri(cluster.uri(0, StreamCalls.PATH))
			.bodyValue(StreamCalls.get("k".getBytes()))
			.exchange()
			.expectStatus()
			.isUnauthorized()
			.expectBody(String.class)
			.value((body) -> assertThat(body).contains("node certificate"));
		// The public API does not care who the client is (client authentication is off).
		client.get().uri("/v0/status").exchange().expectStatus().isOk();
		assertThat(cluster.localEntry(0, "never-written")).isNull();
	}

	@Test
	void theNodesCertificateProvesANode() {
		WebTestClient node = TestClients.forUrl(cluster.url(0), withKey(tls.node()));
		node.get().uri(cluster.uri(0, InternalApi.RING_PATH)).exchange().expectStatus().isOk();
	}

	/**
	 * A certificate of the cluster's CA with {@code CN=127.0.0.1} (the nodes' host) and
	 * no subject alternative name: a common name never names a node.
	 */
	@Test
	void aCommonNameAloneIsNoNode() {
		refusedAsNode(tls.authority().issue("127.0.0.1"), "common-name-only");
	}

	/** A node certificate of the same CA for the same host, of another cluster. */
	@Test
	void aNodeOfAnotherClusterIsNoNode() {
		refusedAsNode(
				tls.authority()
					.issue("quorumkv-node", "127.0.0.1", "localhost", "spiffe://another-cluster/node/test-node"),
				"another-cluster");
	}

	/**
	 * An application's certificate of the cluster's CA ({@code clientAuth}, issued for an
	 * application on the nodes' host, no node identity): refused on the internal routes,
	 * served on the public ones (open here).
	 */
	@Test
	void anApplicationCertificateIsNoNodeButAClientOfThePublicApi() {
		Issued application = tls.authority().issueClient("127.0.0.1", "127.0.0.1", "reporting.example.com");
		refusedAsNode(application, "application");
		WebTestClient client = TestClients.forUrl(cluster.url(0), withKey(application));
		client.put()
			.uri(cluster.uri(0, "/v0/entity?id=from-application&replicas=2/2"))
			.bodyValue("v".getBytes(StandardCharsets.UTF_8))
			.exchange()
			.expectStatus()
			.isCreated();
		client.get().uri(cluster.uri(0, "/v0/entity?id=from-application")).exchange().expectStatus().isOk();
	}

	/** The ring and a direct replica write through the internal API are refused. */
	private static void refusedAsNode(Issued certificate, String key) {
		double refusedBefore = refused("not-a-node");
		WebTestClient client = TestClients.forUrl(cluster.url(0), withKey(certificate));
		client.get().uri(cluster.uri(0, InternalApi.RING_PATH)).exchange().expectStatus().isUnauthorized();
		client.post()
			.uri(cluster.uri(0, StreamCalls.PATH))
			.bodyValue(StreamCalls.upsert(
					new Entry(key.getBytes(StandardCharsets.UTF_8), "injected".getBytes(StandardCharsets.UTF_8), 1)))
			.exchange()
			.expectStatus()
			.isUnauthorized();
		assertThat(cluster.localEntry(0, key)).isNull();
		assertThat(refused("not-a-node")).isEqualTo(refusedBefore + 2);
	}

	@Test
	void newCertificatesAreUsedWithoutARestart() {
		put(0, "before", "2/2");
		BigInteger first = serverSerial(cluster.port(0), tls.authority());
		assertThat(first).isEqualTo(tls.node().serial());

		// A new CA and a new node certificate replace the old ones in the bundle's files.
		Authority rotated = Authority.create("QuorumKV rotated CA");
		Issued renewed = rotated.issue("quorumkv-node", TestTls.NODE_NAMES);
		renewed.writePem(tls.folder(), "node");
		rotated.writePem(tls.folder(), "ca");
		eventually(Duration.ofSeconds(20),
				() -> assertThat(serverSerial(cluster.port(0), rotated)).isEqualTo(renewed.serial()));

		// Node 1 starts anew with the new files. Node 0 was not restarted: its calls to
		// node 1 now need its reloaded trust (node 1 presents the new CA's certificate)
		// and its reloaded key (node 1 trusts only the new CA).
		cluster.stop(1);
		cluster.start(1);
		TestTls renewedTls = new TestTls(tls.folder(), rotated, renewed, true);
		WebTestClient client = TestClients.forUrl(cluster.url(0), renewedTls.anonymousClient());
		eventually(Duration.ofSeconds(20),
				() -> client.put()
					.uri(cluster.uri(0, "/v0/entity?id=after&replicas=2/2"))
					.bodyValue("v".getBytes(StandardCharsets.UTF_8))
					.exchange()
					.expectStatus()
					.isCreated());
		tls = renewedTls;
	}

	private static void put(int node, String key, String replicas) {
		cluster.client(node)
			.put()
			.uri(cluster.uri(node, "/v0/entity?id=" + key + "&replicas=" + replicas))
			.bodyValue("v".getBytes(StandardCharsets.UTF_8))
			.exchange()
			.expectStatus()
			.isCreated();
	}

	private static io.netty.handler.ssl.SslContext withKey(Issued certificate) {
		return tls.authority().clientContext(certificate);
	}

	/** The serial number of the certificate a node presents in a new handshake. */
	private static BigInteger serverSerial(int port, Authority trusted) {
		try (SSLSocket socket = (SSLSocket) context(trusted).getSocketFactory().createSocket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 2000);
			socket.setSoTimeout(2000);
			socket.startHandshake();
			return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSerialNumber();
		}
		catch (SSLHandshakeException ex) {
			// Still the old certificate, which the new CA does not trust.
			return BigInteger.ZERO;
		}
		catch (java.io.IOException | java.security.GeneralSecurityException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static SSLContext context(Authority trusted) throws java.security.GeneralSecurityException {
		SSLContext context = SSLContext.getInstance("TLS");
		context.init(null, trusted.trustManagers().getTrustManagers(), null);
		return context;
	}

}
