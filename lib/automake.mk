# The netdev-vhost library: the port class, the ring question, the tx
# policy and the operator commands.

noinst_LIBRARIES += lib/libnetdev-vhost.a
lib_libnetdev_vhost_a_SOURCES = \
	lib/netdev-vhost.c \
	lib/netdev-vhost.h \
	lib/netdev-vhost-datapath.c \
	lib/netdev-vhost-events.c \
	lib/netdev-vhost-guard.c \
	lib/netdev-vhost-guard.h \
	lib/netdev-vhost-kick.c \
	lib/netdev-vhost-kick.h \
	lib/netdev-vhost-mempool.c \
	lib/netdev-vhost-mempool.h \
	lib/netdev-vhost-notify.c \
	lib/netdev-vhost-notify.h \
	lib/netdev-vhost-options.c \
	lib/netdev-vhost-options.h \
	lib/netdev-vhost-private.h \
	lib/netdev-vhost-qos.c \
	lib/netdev-vhost-qos.h \
	lib/netdev-vhost-registry.c \
	lib/netdev-vhost-registry.h \
	lib/netdev-vhost-stats.c \
	lib/netdev-vhost-stats.h \
	lib/netdev-vhost-txq.c \
	lib/netdev-vhost-txq.h \
	lib/netdev-vhost-unixctl.c \
	lib/netdev-vhost-unixctl.h \
	lib/vhost-kick.c \
	lib/vhost-kick.h \
	lib/vhost-moderation.c \
	lib/vhost-moderation.h \
	lib/vhost-pmd-iter.h \
	lib/vhost-ring.c \
	lib/vhost-ring.h \
	lib/vhost-tx-policy.c \
	lib/vhost-tx-policy.h
