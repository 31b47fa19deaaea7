# The netdev-vhost library: the port class, the ring question, the tx
# policy and the operator commands.

noinst_LIBRARIES += lib/libnetdev-vhost.a
lib_libnetdev_vhost_a_SOURCES = \
	lib/netdev-vhost.c \
	lib/netdev-vhost.h \
	lib/netdev-vhost-private.h \
	lib/netdev-vhost-qos.c \
	lib/netdev-vhost-qos.h \
	lib/netdev-vhost-unixctl.c \
	lib/vhost-kick.c \
	lib/vhost-kick.h \
	lib/vhost-ring.c \
	lib/vhost-ring.h \
	lib/vhost-tx-policy.c \
	lib/vhost-tx-policy.h
