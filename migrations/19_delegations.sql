-- Delegations are read by type (who delegated to whom, in force when): few events among many.
CREATE INDEX events_delegations ON events (stream_id) WHERE type IN ('DelegationGranted', 'DelegationEnded');
