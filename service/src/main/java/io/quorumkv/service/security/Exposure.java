package io.quorumkv.service.security;

import java.net.InetAddress;

import io.quorumkv.service.security.SecurityProperties.PublicApi;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;

/**
 * One line at startup that says who may use this node's API: where it listens, whether
 * over TLS, and whether clients must authenticate. A node that serves its open public API
 * beyond this host, or takes API keys over plain HTTP from other hosts, says so at
 * {@code WARN}; everything else at {@code INFO}.
 */
final class Exposure implements ApplicationListener<WebServerInitializedEvent> {

	private static final Log logger = LogFactory.getLog(Exposure.class);

	private final @Nullable InetAddress address;

	private final boolean tls;

	private final PublicApi publicApi;

	/**
	 * @param address the address the API listens on ({@code server.address}), null for
	 * every interface
	 * @param tls whether the API is served over TLS
	 * @param publicApi whether clients must authenticate
	 */
	Exposure(@Nullable InetAddress address, boolean tls, PublicApi publicApi) {
		this.address = address;
		this.tls = tls;
		this.publicApi = publicApi;
	}

	@Override
	public void onApplicationEvent(WebServerInitializedEvent event) {
		if (event.getApplicationContext().getServerNamespace() != null) {
			return; // the management server's own context (management.server.port)
		}
		Line line = line(this.address, event.getWebServer().getPort(), this.tls, this.publicApi);
		if (line.warning()) {
			logger.warn(line.text());
		}
		else {
			logger.info(line.text());
		}
	}

	/** What the startup line says, and whether it is a warning. */
	record Line(boolean warning, String text) {
	}

	static Line line(@Nullable InetAddress address, int port, boolean tls, PublicApi publicApi) {
		boolean thisHostOnly = address != null && address.isLoopbackAddress();
		String where = ((address != null) ? address.getHostAddress() : "every interface") + " port " + port
				+ (thisHostOnly ? " (this host only)" : "") + (tls ? " over TLS" : " over plain HTTP");
		if (publicApi == PublicApi.OPEN) {
			if (thisHostOnly) {
				return new Line(false, "Public API open on " + where
						+ ": anyone on this host may read, write and delete every key. To serve other hosts,"
						+ " set server.address, quorumkv.security.public-api=authenticated and TLS (docs/security.md)");
			}
			return new Line(true, "Public API OPEN to anyone who reaches " + where
					+ ": they may read, write and delete every key. Set quorumkv.security.public-api=authenticated"
					+ " and TLS (docs/security.md)");
		}
		if (!tls && !thisHostOnly) {
			return new Line(true,
					"Public API on " + where
							+ ": clients authenticate, but their API keys cross the network in plain text."
							+ " Set server.ssl.bundle (docs/security.md)");
		}
		return new Line(false, "Public API on " + where + ": clients authenticate (API keys or certificates)");
	}

}
