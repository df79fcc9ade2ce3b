package shell

import "strings"

// networkSchemes are the URL schemes whose URLs name something on another
// host, not a local file: a word or value starting with one of them and
// :// is not a path (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm). The list is closed on purpose: any other
// scheme (file:, an unknown ab://, a drive letter C://) is read as a path,
// since a tool may open it as one and a word judged as a path can only be
// stricter.
var networkSchemes = [...]string{
	"http", "https", "ftp", "ftps", "sftp", "scp", "ssh", "git", "git+ssh", "git+https", "svn", "svn+ssh",
	"rsync", "ws", "wss", "s3", "gs", "hdfs", "smb", "nfs", "ldap", "ldaps", "redis", "rediss", "mongodb",
	"postgres", "postgresql", "mysql", "amqp", "amqps", "mqtt", "grpc", "telnet", "irc", "docker", "oci",
}

// isNetworkURL reports whether s is scheme://... with a network scheme
// (compared case-insensitively). A drive letter is never a scheme.
func IsNetworkURL(s string) bool {
	i := strings.Index(s, "://")
	if i < 2 || i > 10 {
		return false
	}
	scheme := s[:i]
	for _, n := range networkSchemes {
		if strings.EqualFold(scheme, n) {
			return true
		}
	}
	return false
}
