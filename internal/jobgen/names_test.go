package jobgen

import "testing"

func TestGoName(t *testing.T) {
	for php, want := range map[string]string{
		"podcastId": "PodcastID", "user_id": "UserID", "url": "URL", "carbonImmutable": "CarbonImmutable",
		"HTMLBody": "HTMLBody", "apiKey2": "APIKey2", "x": "X", "_private": "Private", "état": "État", "日本": "X日本",
		"uuid": "UUID", "ScalarJob": "ScalarJob", "ids": "IDs", "userIds": "UserIDs", "urls": "URLs", "dbs": "DBs",
	} {
		if got := GoName(php); got != want {
			t.Errorf("GoName(%q) = %q, want %q", php, got, want)
		}
	}
}
