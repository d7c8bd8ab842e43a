package io.quorumkv.brokenbuild;

import java.nio.file.Path;
import java.util.Objects;

import io.quorumkv.service.paxos.BrokenPaxos;
import io.quorumkv.storage.Storage;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.web.server.WebFilter;

/**
 * Wraps the node's data storage (the bean named {@code storage}; hints are stored apart)
 * in a {@link BrokenStorage} that misbehaves as the mode file says, and puts
 * {@link BrokenNotModified} in front of the routes; breaks the Paxos coordinator's
 * network and acceptor table as {@link BrokenPaxos} says.
 */
@AutoConfiguration
@ConditionalOnProperty("quorumkv.test.broken-mode-file")
public class BrokenStorageAutoConfiguration {

	@Bean
	static BeanPostProcessor brokenStorage(Environment environment) {
		Path modeFile = Path.of(environment.getRequiredProperty("quorumkv.test.broken-mode-file"));
		return new BeanPostProcessor() {

			@Override
			public Object postProcessAfterInitialization(Object bean, String name) {
				if (bean instanceof Storage storage && name.equals("storage")) {
					System.out.println("BROKEN BUILD: the storage bean misbehaves as " + modeFile + " says");
					return new BrokenStorage(storage, new BrokenMode(modeFile));
				}
				return bean;
			}

		};
	}

	@Bean
	static BeanPostProcessor brokenPaxos(Environment environment) {
		BrokenMode mode = new BrokenMode(Path.of(environment.getRequiredProperty("quorumkv.test.broken-mode-file")));
		return new BrokenPaxosBeans(mode);
	}

	@Bean
	static WebFilter brokenNotModified(Environment environment) {
		return new BrokenNotModified(
				new BrokenMode(Path.of(environment.getRequiredProperty("quorumkv.test.broken-mode-file"))));
	}

	/** Hands each bean to {@link BrokenPaxos}, with the bean factory it needs. */
	private static final class BrokenPaxosBeans implements BeanPostProcessor, BeanFactoryAware {

		private final BrokenMode mode;

		private @Nullable BeanFactory beans;

		BrokenPaxosBeans(BrokenMode mode) {
			this.mode = mode;
		}

		@Override
		public void setBeanFactory(BeanFactory beanFactory) throws BeansException {
			this.beans = beanFactory;
		}

		@Override
		public Object postProcessAfterInitialization(Object bean, String name) {
			return BrokenPaxos.postProcess(bean, name, this.mode::get, Objects.requireNonNull(this.beans));
		}

	}

}
