"""The real payment providers' adapters (CONTRACT 7, "Real providers"): Paystack and Stripe,
each speaking its provider's documented HTTP API over httpx (the `payments` extra), chosen by
`LEDGER_PAYMENT_PROVIDER` (ledger/providers/base.py: `provider_from_env`). docs/payments.md says why
httpx for both and what each adapter sends, checks and answers."""
