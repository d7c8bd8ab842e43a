package io.quorumkv.service.replication;

import java.time.Duration;

import io.quorumkv.service.config.Bounds;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Hinted handoff: writes a replica missed are kept (durably, apart from the data) and
 * delivered when it is reachable again.
 *
 * @param maxPending hints kept per peer; more are dropped and counted
 * @param maxAge hints older than this are dropped instead of delivered
 * @param deliveryInterval how often pending hints are tried
 * @param maxBackoff longest pause after failed deliveries to a peer
 */
@ConfigurationProperties("quorumkv.cluster.hints")
public record HintProperties(@DefaultValue("100000") long maxPending, @DefaultValue("3h") Duration maxAge,
		@DefaultValue("1s") Duration deliveryInterval, @DefaultValue("30s") Duration maxBackoff) {

	public HintProperties {
		if (maxPending < 0) {
			throw new IllegalArgumentException("quorumkv.cluster.hints.max-pending must not be negative");
		}
		Bounds.positive(maxAge, "quorumkv.cluster.hints.max-age");
		Bounds.positive(deliveryInterval, "quorumkv.cluster.hints.delivery-interval");
		Bounds.positive(maxBackoff, "quorumkv.cluster.hints.max-backoff");
	}

}
