//! Credentials of the agents' protocol: random bearer tokens, of which the
//! store keeps only the SHA-256 ([`token_hash`]), and per-agent tokens that
//! an operator issues for one agent name and can revoke. Revoking a token
//! ends the sessions of the agent it was issued for; issuing it again
//! replaces the old token (a rotation), ending them too.

use crate::store::unix_now;
use crate::{Store, StoreError};
use rusqlite::{params, OptionalExtension, TransactionBehavior};
use sha2::{Digest, Sha256};

/// A new bearer token: 256 random bits, as 64 hex digits.
pub fn new_token() -> String {
    hex(&rand::random::<[u8; 32]>())
}

/// The hash the store keeps of `token`: its SHA-256, as 64 hex digits.
pub fn token_hash(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A per-agent token as the store records it (never the token itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentToken {
    /// The agent name it lets register.
    pub name: String,
    /// Seconds since the epoch.
    pub issued_at: i64,
    /// When it was revoked, in seconds since the epoch; `None` while valid.
    pub revoked_at: Option<i64>,
}

impl Store {
    /// Issues a token for agent `name` and returns it (the store keeps its
    /// hash); a token issued for the name before is replaced and the
    /// agent's sessions end.
    pub fn issue_agent_token(&mut self, name: &str) -> Result<String, StoreError> {
        crate::queue::check_agent_name(name)?;
        let token = new_token();
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO agent_tokens (name, token_hash, issued_at, revoked_at) VALUES (?1, ?2, ?3, NULL)
             ON CONFLICT (name) DO UPDATE SET token_hash = excluded.token_hash, issued_at = excluded.issued_at, revoked_at = NULL",
            params![name, token_hash(&token), unix_now()],
        )?;
        end_sessions_of(&tx, name)?;
        tx.commit()?;
        Ok(token)
    }

    /// Revokes the token of agent `name` and ends the agent's sessions;
    /// how many sessions ended. [`StoreError::UnknownAgentToken`] if no
    /// token was issued for the name.
    pub fn revoke_agent_token(&mut self, name: &str) -> Result<usize, StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let revoked =
            tx.execute("UPDATE agent_tokens SET revoked_at = COALESCE(revoked_at, ?2) WHERE name = ?1", params![name, unix_now()])?;
        if revoked == 0 {
            return Err(StoreError::UnknownAgentToken(name.to_string()));
        }
        let ended = end_sessions_of(&tx, name)?;
        tx.commit()?;
        Ok(ended)
    }

    /// Every per-agent token, by name.
    pub fn agent_tokens(&self) -> Result<Vec<AgentToken>, StoreError> {
        let mut stmt = self.conn.prepare("SELECT name, issued_at, revoked_at FROM agent_tokens ORDER BY name")?;
        let rows = stmt.query_map([], |r| Ok(AgentToken { name: r.get(0)?, issued_at: r.get(1)?, revoked_at: r.get(2)? }))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The agent name the unrevoked token hashing to `hash` was issued for.
    pub fn agent_token_name(&self, hash: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .prepare_cached("SELECT name FROM agent_tokens WHERE token_hash = ?1 AND revoked_at IS NULL")?
            .query_row([hash], |r| r.get(0))
            .optional()?)
    }

    /// The hashes of the unrevoked per-agent tokens, with their names.
    pub fn live_agent_tokens(&self) -> Result<Vec<(String, String)>, StoreError> {
        let mut stmt = self.conn.prepare("SELECT token_hash, name FROM agent_tokens WHERE revoked_at IS NULL")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// Ends the sessions of the agents named `name` (on any host); how many.
fn end_sessions_of(tx: &rusqlite::Transaction<'_>, name: &str) -> Result<usize, StoreError> {
    Ok(tx.execute("DELETE FROM agent_sessions WHERE agent_id IN (SELECT id FROM agents WHERE name = ?1)", [name])?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HostFingerprint;

    fn host() -> HostFingerprint {
        HostFingerprint::from_sources("processor: 0\nmodel name: cpu\nflags: avx2\n", vec![])
    }

    #[test]
    fn a_token_names_its_agent_until_revoked_or_replaced_and_either_ends_its_sessions() {
        let mut store = Store::open_in_memory().unwrap();
        let token = store.issue_agent_token("a").unwrap();
        assert_eq!(token.len(), 64);
        assert_eq!(store.agent_token_name(&token_hash(&token)).unwrap().as_deref(), Some("a"));
        store.register_agent("a", &host(), &serde_json::json!({}), "session-a").unwrap();
        store.register_agent("b", &host(), &serde_json::json!({}), "session-b").unwrap();

        let rotated = store.issue_agent_token("a").unwrap();
        assert_eq!(store.agent_token_name(&token_hash(&token)).unwrap(), None, "the old token is replaced");
        assert_eq!(store.agent_sessions().unwrap().iter().map(|s| s.agent.as_str()).collect::<Vec<_>>(), ["b"]);

        store.register_agent("a", &host(), &serde_json::json!({}), "session-a2").unwrap();
        assert_eq!(store.revoke_agent_token("a").unwrap(), 1);
        assert_eq!(store.agent_token_name(&token_hash(&rotated)).unwrap(), None);
        assert!(store.live_agent_tokens().unwrap().is_empty());
        let listed = store.agent_tokens().unwrap();
        assert!(listed.len() == 1 && listed[0].name == "a" && listed[0].revoked_at.is_some(), "{listed:?}");
        assert!(matches!(store.revoke_agent_token("ghost"), Err(StoreError::UnknownAgentToken(_))));
        assert!(matches!(store.issue_agent_token(""), Err(StoreError::AgentName(_))));
    }
}
