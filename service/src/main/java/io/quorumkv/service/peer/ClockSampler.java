package io.quorumkv.service.peer;

import java.net.URI;

import reactor.core.publisher.Mono;

import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;

/**
 * Samples the peer's clock offset from each answer of a call: sent and received on this
 * node's wall clock, the peer's wall clock from {@link InternalApi#CLOCK}. (The replica
 * streams sample their own answers.)
 */
final class ClockSampler implements ExchangeFilterFunction {

	private final PeerClient.Clocks clocks;

	ClockSampler(PeerClient.Clocks clocks) {
		this.clocks = clocks;
	}

	@Override
	public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
		return Mono.defer(() -> {
			long sent = this.clocks.clock().wallMicros();
			return next.exchange(request).doOnNext((response) -> sample(request, sent, response));
		});
	}

	private void sample(ClientRequest request, long sent, ClientResponse response) {
		String peerClock = response.headers().asHttpHeaders().getFirst(InternalApi.CLOCK);
		if (peerClock != null) {
			try {
				URI url = request.url();
				this.clocks.offsets()
					.sample(url.getScheme() + "://" + url.getHost() + ":" + url.getPort(), sent,
							this.clocks.clock().wallMicros(), Long.parseLong(peerClock));
			}
			catch (NumberFormatException ex) {
				// not a sample
			}
		}
	}

}
