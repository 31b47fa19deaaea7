# Tools: the test guest, the demo, the benchmark, the OVS preparation script,
# the Debian 13 root.

bin_PROGRAMS += utilities/ovs-vhost-guest
utilities_ovs_vhost_guest_SOURCES = utilities/ovs-vhost-guest.c
utilities_ovs_vhost_guest_CPPFLAGS = -DALLOW_EXPERIMENTAL_API
utilities_ovs_vhost_guest_CFLAGS = $(DPDK_CFLAGS) $(SANITIZER_FLAGS)
utilities_ovs_vhost_guest_LDADD = $(DPDK_LIBS)

EXTRA_DIST += \
	utilities/ovs-vhost-prepare-ovs \
	utilities/ovs-vhost-prepare-debian13 \
	utilities/ovs-vhost-demo \
	utilities/ovs-vhost-bench \
	utilities/ovs_vhost_stats.py
