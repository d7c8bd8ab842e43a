package io.quorumkv.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.RepeatedTest;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The HTTP/1.1 server QuorumKV runs on keeps reading a keep-alive connection after a
 * request that arrived while the previous one was still finishing was answered at once.
 * Reactor Netty 1.3.7 did not (reactor-netty #4347, #4361): the connection's next request
 * then went unanswered for good. QuorumKV saw it as a client request unanswered after a
 * quick one on the same connection (a refused PUT, a 2/3 answer while a replica was
 * slow); the build pins a Reactor Netty with the fix, and this test fails on one without.
 */
class KeepAliveReadResumeTest {

	private static final String REQUEST = "GET /%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

	@RepeatedTest(3)
	void aThirdRequestIsAnsweredAfterASlowThenAnImmediateOne() throws IOException {
		AtomicInteger accepted = new AtomicInteger();
		DisposableServer server = HttpServer.create().host("127.0.0.1").port(0).handle((request, response) -> {
			accepted.incrementAndGet();
			Mono<String> body = request.uri().equals("/first") ? Mono.delay(Duration.ofMillis(50)).thenReturn("ok")
					: Mono.just("ok");
			return response.sendString(body);
		}).bindNow(Duration.ofSeconds(10));
		try (Socket socket = new Socket("127.0.0.1", server.port())) {
			socket.setSoTimeout(5_000);
			OutputStream out = socket.getOutputStream();
			InputStream in = socket.getInputStream();
			out.write((REQUEST.formatted("first") + REQUEST.formatted("second")).getBytes(StandardCharsets.US_ASCII));
			out.flush();
			readResponse(in);
			readResponse(in);
			out.write(REQUEST.formatted("third").getBytes(StandardCharsets.US_ASCII));
			out.flush();
			assertThat(readResponse(in)).startsWith("HTTP/1.1 200");
			assertThat(accepted).hasValue(3);
		}
		finally {
			server.disposeNow(Duration.ofSeconds(10));
		}
	}

	/** One response with a Content-Length or chunked "ok" body; its status line. */
	private static String readResponse(InputStream in) throws IOException {
		StringBuilder head = new StringBuilder();
		while (!head.toString().endsWith("\r\n\r\n")) {
			int b = in.read();
			if (b < 0) {
				throw new IOException("connection closed after " + head);
			}
			head.append((char) b);
		}
		String headers = head.toString().toLowerCase(Locale.ROOT);
		if (headers.contains("transfer-encoding: chunked")) {
			StringBuilder tail = new StringBuilder();
			while (!tail.toString().endsWith("0\r\n\r\n")) {
				int b = in.read();
				if (b < 0) {
					throw new IOException("connection closed in a chunked body");
				}
				tail.append((char) b);
			}
		}
		else {
			int at = headers.indexOf("content-length:");
			int length = Integer.parseInt(headers.substring(at + 15, headers.indexOf("\r\n", at)).trim());
			in.readNBytes(length);
		}
		return head.substring(0, head.indexOf("\r\n"));
	}

}
