# ovs-vswitchd: OVS's unmodified vswitchd objects linked with our library.
# -Wl,--wrap=netdev_dpdk_register lets vswitchd-plugin/netdev-vhost-plugin.c
# run after OVS registered its DPDK classes and swap in ours for the vhost
# port types, --wrap=unixctl_command_register puts our answer in front of
# netdev-dpdk/get-mempool-info and /set-admin-state, --wrap=print_dpdk_version
# adds our line to --version (DESIGN-NOTES.md section 2).

sbin_PROGRAMS += vswitchd-plugin/ovs-vswitchd
vswitchd_plugin_ovs_vswitchd_SOURCES = vswitchd-plugin/netdev-vhost-plugin.c
vswitchd_plugin_ovs_vswitchd_LDFLAGS = \
	$(AM_LDFLAGS) -Wl,--wrap=netdev_dpdk_register -Wl,--wrap=dpdk_init \
	-Wl,--wrap=unixctl_command_register -Wl,--wrap=print_dpdk_version \
	$(OVS_VSWITCHD_LDFLAGS)
vswitchd_plugin_ovs_vswitchd_LDADD = \
	$(OVS_BUILDDIR)/vswitchd/bridge.o \
	$(OVS_BUILDDIR)/vswitchd/ovs-vswitchd.o \
	$(OVS_BUILDDIR)/vswitchd/system-stats.o \
	lib/libnetdev-vhost.a \
	$(OVS_ARCHIVES) \
	$(OVS_LIBS)
