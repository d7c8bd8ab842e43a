package io.quorumkv.service.deploy;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.quorumkv.service.prestop.PreStop;

/** What the manifests' tests know of the pre-stop program. */
final class PreStopHook {

	static final Class<?> PROGRAM = PreStop.class;

	/** The wait of a pod that stays, the program's default. */
	static final Duration DRAIN = Duration.ofSeconds(5);

	private PreStopHook() {
	}

	/** {@code QKV_PRESTOP_LIMIT} as the program reads it: {@code 1740s}, {@code 29m}. */
	static Duration limit(String value) {
		Matcher matcher = Pattern.compile("(\\d+)(s|m)").matcher(value);
		if (!matcher.matches()) {
			throw new AssertionError("QKV_PRESTOP_LIMIT " + value + " is not in seconds or minutes");
		}
		long amount = Long.parseLong(matcher.group(1));
		return matcher.group(2).equals("m") ? Duration.ofMinutes(amount) : Duration.ofSeconds(amount);
	}

	/** The Dockerfile's last {@code WORKDIR}: where the layers are. */
	static String workdir(String dockerfile) {
		Matcher matcher = Pattern.compile("(?m)^WORKDIR (\\S+)$").matcher(dockerfile);
		String last = null;
		while (matcher.find()) {
			last = matcher.group(1);
		}
		if (last == null) {
			throw new AssertionError("the Dockerfile has no WORKDIR");
		}
		return last;
	}

}
