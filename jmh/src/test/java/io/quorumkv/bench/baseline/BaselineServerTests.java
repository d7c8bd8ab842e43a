package io.quorumkv.bench.baseline;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;
import reactor.netty.DisposableServer;

class BaselineServerTests {

	@Test
	void servesPutGetDelete() throws Exception {
		DisposableServer server = new BaselineServer().start(0);
		try {
			HttpClient client = HttpClient.newHttpClient();
			String base = "http://127.0.0.1:" + server.port() + "/v0/entity?id=k";
			assertThat(client
				.send(HttpRequest.newBuilder(URI.create(base)).PUT(HttpRequest.BodyPublishers.ofString("v")).build(),
						HttpResponse.BodyHandlers.discarding())
				.statusCode()).isEqualTo(201);
			HttpResponse<String> got = client.send(HttpRequest.newBuilder(URI.create(base)).GET().build(),
					HttpResponse.BodyHandlers.ofString());
			assertThat(got.statusCode()).isEqualTo(200);
			assertThat(got.body()).isEqualTo("v");
			assertThat(client
				.send(HttpRequest.newBuilder(URI.create(base)).DELETE().build(), HttpResponse.BodyHandlers.discarding())
				.statusCode()).isEqualTo(202);
			assertThat(client
				.send(HttpRequest.newBuilder(URI.create(base)).GET().build(), HttpResponse.BodyHandlers.discarding())
				.statusCode()).isEqualTo(404);
		}
		finally {
			server.disposeNow();
		}
	}

}
