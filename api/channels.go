package api

import (
	"net/http"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/auth"
)

// bindChannel refuses a call on a channel its token may not ask for
// (docs/decisions.md#channels-bind-the-token): a token limited to some
// channels asks for those only, and only an admin token may name a
// channel the policy does not check, whose calls the engine allows as
// "Skipped for channel" (JiuwenSwarm's own runtimes do that). Without the
// second rule any agent could opt out of every check by naming a channel.
func (s *Server) bindChannel(r *http.Request, ch string) error {
	p, ok := PrincipalFrom(r.Context())
	if !ok {
		return service.Forbidden("", "no principal")
	}
	key := engine.ChannelKey(ch)
	if len(p.Channels) > 0 && !channelListed(p.Channels, key) {
		return service.Forbidden("channel_id", "this token may only ask for the channels %v, not %q", p.Channels, ch)
	}
	if p.Role != auth.RoleAdmin && !s.deps.Policy.Engine().ChecksChannel(ch) {
		return service.Forbidden("channel_id", "the policy does not check channel %q; only an admin token may ask for a channel it skips", ch)
	}
	return nil
}

// channelListed reports whether a token's channel list holds key.
func channelListed(list []string, key string) bool {
	for _, c := range list {
		if engine.ChannelKey(c) == key {
			return true
		}
	}
	return false
}
