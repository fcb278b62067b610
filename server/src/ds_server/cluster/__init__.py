"""Several ds-server replicas on one shared store: who runs the subscriptions."""
