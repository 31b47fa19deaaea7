# Tests: OVS autotest suite (tests/testsuite.at) with unit tests of the pure
# ring question and tx policy, and system tests with real DPDK guests.

check_PROGRAMS += tests/test-vhost-ring tests/test-vhost-tx-policy \
	tests/test-vhost-kick tests/test-vhost-moderation tests/test-vhost-pmd-iter
tests_test_vhost_ring_SOURCES = tests/test-vhost-ring.c lib/vhost-ring.c
tests_test_vhost_ring_CPPFLAGS = -I $(top_srcdir)/lib
tests_test_vhost_ring_CFLAGS = -std=gnu99 -Wall -Wextra $(SANITIZER_FLAGS)
tests_test_vhost_tx_policy_SOURCES = \
	tests/test-vhost-tx-policy.c lib/vhost-tx-policy.c
tests_test_vhost_tx_policy_CPPFLAGS = -I $(top_srcdir)/lib
tests_test_vhost_tx_policy_CFLAGS = -std=gnu99 -Wall -Wextra $(SANITIZER_FLAGS)
tests_test_vhost_kick_SOURCES = tests/test-vhost-kick.c lib/vhost-kick.c
tests_test_vhost_kick_CPPFLAGS = -I $(top_srcdir)/lib
tests_test_vhost_kick_CFLAGS = -std=gnu99 -Wall -Wextra $(SANITIZER_FLAGS)
tests_test_vhost_moderation_SOURCES = \
	tests/test-vhost-moderation.c lib/vhost-moderation.c lib/vhost-tx-policy.c \
	lib/vhost-kick.c
tests_test_vhost_moderation_CPPFLAGS = -I $(top_srcdir)/lib
tests_test_vhost_moderation_CFLAGS = -std=gnu99 -Wall -Wextra $(SANITIZER_FLAGS)
tests_test_vhost_moderation_LDADD = -lm
tests_test_vhost_pmd_iter_SOURCES = tests/test-vhost-pmd-iter.c
tests_test_vhost_pmd_iter_CPPFLAGS = -I $(top_srcdir)/lib
tests_test_vhost_pmd_iter_CFLAGS = -std=gnu99 -Wall -Wextra $(SANITIZER_FLAGS)

TESTSUITE_AT = \
	tests/testsuite.at \
	tests/netdev-vhost-macros.at \
	tests/txp-macros.at \
	tests/linux-guest-macros.at \
	tests/ovn-macros.at \
	tests/unit.at \
	tests/system-vhost.at \
	tests/system-txp.at \
	tests/system-reliability.at \
	tests/system-linux-guest.at \
	tests/system-ops.at \
	tests/system-offload.at \
	tests/system-defects.at \
	tests/system-kicks.at \
	tests/system-ovn.at \
	tests/system-adaptive.at \
	tests/system-frontend.at \
	tests/system-batch.at \
	tests/system-options.at \
	tests/system-migration.at
EXTRA_DIST += $(TESTSUITE_AT) tests/testsuite tests/atlocal.in package.m4 \
	tests/linux-guest-image.sh tests/linux-guest-init tests/linux-guest-udp.c \
	tests/ovs-system-dpdk.sh tests/package-deb.sh tests/ovs_vhost_checks.py
TESTSUITE = $(srcdir)/tests/testsuite
AUTOTEST = $(AUTOM4TE) -l autotest
AUTOTEST_PATH = $(abs_builddir)/vswitchd-plugin:$(abs_builddir)/tests:$(abs_builddir)/utilities:$(abs_srcdir)/utilities:$(OVS_BUILDDIR)/utilities:$(OVS_BUILDDIR)/ovsdb

DISTCLEANFILES += tests/atconfig tests/atlocal

$(srcdir)/package.m4: $(top_srcdir)/configure.ac
	$(AM_V_GEN):;{ \
	  echo '# Signature of the current package.' && \
	  echo 'm4_define([AT_PACKAGE_NAME],      [$(PACKAGE_NAME)])' && \
	  echo 'm4_define([AT_PACKAGE_TARNAME],   [$(PACKAGE_TARNAME)])' && \
	  echo 'm4_define([AT_PACKAGE_VERSION],   [$(PACKAGE_VERSION)])' && \
	  echo 'm4_define([AT_PACKAGE_STRING],    [$(PACKAGE_STRING)])' && \
	  echo 'm4_define([AT_PACKAGE_BUGREPORT], [$(PACKAGE_BUGREPORT)])'; \
	} >'$(srcdir)/package.m4'

$(TESTSUITE): package.m4 $(TESTSUITE_AT)
	$(AM_V_GEN)$(AUTOTEST) -I '$(srcdir)' -I '$(OVS_SRCDIR)' \
	  -o $@.tmp $@.at && mv $@.tmp $@

# "make check": the whole suite.  TESTSUITEFLAGS passes options, e.g.
# TESTSUITEFLAGS='-k unit' or '-j1 -v 5'.
check-local: tests/atconfig tests/atlocal $(TESTSUITE) $(check_PROGRAMS) \
	$(bin_PROGRAMS) $(sbin_PROGRAMS)
	$(SHELL) '$(TESTSUITE)' -C tests AUTOTEST_PATH='$(AUTOTEST_PATH)' \
	  $(TESTSUITEFLAGS)

clean-local:
	test ! -f '$(TESTSUITE)' || $(SHELL) '$(TESTSUITE)' -C tests --clean

# "make check-unit": only the unit tests (no DPDK, no OVS), e.g. in a
# --enable-sanitizers build (utilities/ovs-vhost-build --check runs them so).
check-unit: tests/atconfig tests/atlocal $(TESTSUITE) $(check_PROGRAMS)
	$(SHELL) '$(TESTSUITE)' -C tests AUTOTEST_PATH='$(AUTOTEST_PATH)' \
	  -k unit $(TESTSUITEFLAGS)
.PHONY: check-unit
