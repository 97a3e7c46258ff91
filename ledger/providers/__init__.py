"""The real payment providers' adapters (CONTRACT 7, "Real providers"): Paystack and Stripe,
each speaking its provider's documented HTTP API over the standard library's `http.client`
(ledger/providers/http.py), chosen by `LEDGER_PAYMENT_PROVIDER` (ledger/providers/base.py:
`provider_from_env`). docs/payments.md says why that client for both and what each adapter
sends, checks and answers."""
