"""The reference model: the contract's rules written again, small and slow, from the contract
alone (sections 3-7 and 14), never importing the ledger's decision.

The simulation feeds it each command in the order the ledger decided it and compares. The
ledger's own ids (orders, links, escalations) are taken from its outcomes: the model checks
everything else. `expect` says what the contract makes of a command on this state;
`learn` applies what the ledger answered, once it matched.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

AGENT = frozenset({"PlaceOrder", "IssuePaymentLink", "Escalate", "CompleteTurn"})
OWNER = frozenset({"RegisterProduct", "Restock", "SetPrice", "RegisterCustomer", "SetCreditLimit",
                   "AcknowledgeEscalation", "CloseEscalation", "ApproveOrder"})
REQUIRED = {"PlaceOrder": ("customer_id", "lines"), "IssuePaymentLink": ("order_id",), "Escalate": (),
            "CompleteTurn": ("reply",), "RegisterProduct": ("name", "sku", "stock", "unit_price"),
            "Restock": ("quantity", "sku"), "SetPrice": ("sku", "unit_price"),
            "RegisterCustomer": ("credit_limit", "customer_id", "name"),
            "SetCreditLimit": ("credit_limit", "customer_id"), "AcknowledgeEscalation": ("escalation_id",),
            "CloseEscalation": ("escalation_id", "resolution"), "ApproveOrder": ("escalation_id",)}


@dataclass
class Expected:
    status: str
    reason: str | None = None
    events: list[str] = field(default_factory=list)
    checks: dict[str, Any] = field(default_factory=dict)  # outcome fields that must be exactly these


@dataclass
class Order:
    customer_id: str
    total: int
    paid: int = 0
    link: tuple[str, int] | None = None  # the live link: (reference, amount)

    @property
    def outstanding(self) -> int:
        return max(0, self.total - self.paid)


@dataclass
class Business:
    products: dict[str, list[int]] = field(default_factory=dict)  # sku -> [price, stock]
    customers: dict[str, list[int]] = field(default_factory=dict)  # id -> [limit, exposure]
    orders: dict[str, Order] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)  # reference -> order
    escalations: dict[str, str] = field(default_factory=dict)  # id -> status
    held: dict[str, list[tuple[str, int]]] = field(default_factory=dict)  # open credit-limit escalation -> lines
    held_customer: dict[str, str] = field(default_factory=dict)
    turns: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # turn -> its escalations
    # A link command's link asked of the provider (its `PaymentLinkRequested`, which no outcome
    # names: the checks tell the model from the log) -> the amount it was asked for.
    requested: dict[str, int] = field(default_factory=dict)


def _known(fact: Any) -> bool:
    return (isinstance(fact, dict) and fact.get("status") == "known" and fact.get("value") not in (None, "", [], {})
            and isinstance(fact.get("source"), str) and fact.get("source") != "")


class Model:
    def __init__(self) -> None:
        self.businesses: dict[str, Business] = {}
        self.claims: dict[tuple[str, str], tuple[bytes, dict]] = {}  # (business, id) -> (content, first outcome)
        self.payments: dict[str, bytes] = {}  # provider event id -> body

    def business(self, business_id: str) -> Business:
        return self.businesses.setdefault(business_id, Business())

    # --- commands ---------------------------------------------------------------

    def expect(self, command: dict, door: str, content: bytes) -> Expected:
        kind = command["type"]
        if kind not in (AGENT if door == "agent" else OWNER):
            return Expected("blocked", "not_permitted", ["CommandBlocked"])
        claim = self.claims.get((command["business_id"], command["command_id"]))
        if claim is not None:
            if claim[0] == content:
                return Expected(claim[1]["status"], claim[1]["reason"], claim[1]["events"], {"duplicate": True})
            return Expected("blocked", "command_id_reused", ["CommandBlocked"])
        facts = command.get("facts") or {}
        unknown = sorted(n for n in REQUIRED[kind] if not _known(facts.get(n))
                         and (facts.get(n) or {}).get("status") != "conflict")
        if unknown:
            return Expected("blocked", "unknown_facts", ["CommandBlocked"], {"fields": unknown})
        if any((facts.get(n) or {}).get("status") == "conflict" for n in REQUIRED[kind]):
            return Expected("blocked", "conflicting_facts", ["CommandBlocked"])
        values = {n: f["value"] for n, f in facts.items() if _known(f)}
        return getattr(self, "_" + kind)(self.business(command["business_id"]), command, values)

    def learn(self, command: dict, content: bytes, out: dict) -> None:
        """Apply what the ledger answered (the model's expectation already matched it)."""
        key = (command["business_id"], command["command_id"])
        if out.get("duplicate") or out["reason"] in ("not_permitted", "command_id_reused"):
            return
        self.claims[key] = (content, out)
        b = self.business(command["business_id"])
        values = {n: f["value"] for n, f in (command.get("facts") or {}).items() if _known(f)}
        getattr(self, "_learn_" + command["type"], lambda *a: None)(b, command, values, out)
        if out.get("escalated"):
            self._escalated(b, command, out)

    def _escalated(self, b: Business, command: dict, out: dict) -> None:
        b.escalations[out["escalation_id"]] = "open"
        turn = (command.get("conversation_id"), command.get("turn_id"))
        b.turns.setdefault(turn, []).append(out["escalation_id"])
        if out["reason"] == "credit_limit_exceeded":
            lines = [(line["sku"], line["quantity"]) for line in command["facts"]["lines"]["value"]]
            b.held[out["escalation_id"]] = lines
            b.held_customer[out["escalation_id"]] = command["facts"]["customer_id"]["value"]

    # --- agent rules ----------------------------------------------------------

    def _priced(self, b: Business, customer_id: str, lines: list[tuple[str, int]]) -> Expected | int:
        if customer_id not in b.customers:
            return Expected("blocked", "unknown_customer", ["CommandBlocked"])
        missing = sorted({sku for sku, _ in lines if sku not in b.products})
        if missing:
            return Expected("blocked", "unknown_product", ["CommandBlocked"], {"details": {"skus": missing}})
        wanted: dict[str, int] = {}
        for sku, quantity in lines:
            wanted[sku] = wanted.get(sku, 0) + quantity
        if any(q > b.products[sku][1] for sku, q in wanted.items()):
            return Expected("blocked", "insufficient_stock", ["CommandBlocked"])
        return sum(b.products[sku][0] * quantity for sku, quantity in lines)

    def _PlaceOrder(self, b: Business, command: dict, v: dict) -> Expected:
        lines = [(line["sku"], line["quantity"]) for line in v["lines"]]
        total = self._priced(b, v["customer_id"], lines)
        if isinstance(total, Expected):
            return total
        limit, exposure = b.customers[v["customer_id"]]
        if exposure + total > limit:
            return Expected("blocked", "credit_limit_exceeded", ["CommandBlocked", "EscalationRaised"], {
                "escalated": True, "details": {"credit_limit": limit, "exposure": exposure, "order_total": total}})
        return Expected("accepted", None, ["OrderPlaced"], {"total": total})

    def _learn_PlaceOrder(self, b: Business, command: dict, v: dict, out: dict) -> None:
        if out["status"] == "accepted":
            self._place(b, v["customer_id"], [(l["sku"], l["quantity"]) for l in v["lines"]], out)

    def _place(self, b: Business, customer_id: str, lines: list[tuple[str, int]], out: dict) -> None:
        for sku, quantity in lines:
            b.products[sku][1] -= quantity
        b.orders[out["order_id"]] = Order(customer_id, out["total"])
        b.customers[customer_id][1] += out["total"]

    def _IssuePaymentLink(self, b: Business, command: dict, v: dict) -> Expected:
        order = b.orders.get(v["order_id"])
        if order is None:
            return Expected("blocked", "unknown_order", ["CommandBlocked"])
        if order.outstanding == 0:
            return Expected("blocked", "nothing_outstanding", ["CommandBlocked"])
        if order.link is not None and order.link[1] == order.outstanding:
            return Expected("accepted", None, ["PaymentLinkResent"], {"reused": True})
        if b.requested.get(command["command_id"], order.outstanding) != order.outstanding:
            # its link asked of the provider for what was owed then; a payment landed since
            return Expected("blocked", "provider_unavailable", ["CommandBlocked"])
        voided = ["PaymentLinkVoided"] if order.link is not None else []
        return Expected("accepted", None, [*voided, "PaymentLinkIssued"], {"reused": False})

    def _learn_IssuePaymentLink(self, b: Business, command: dict, v: dict, out: dict) -> None:
        link = out.get("payment_link")
        if out["status"] == "accepted" and link:
            b.orders[v["order_id"]].link = (link["reference"], link["amount"])
            b.links[link["reference"]] = v["order_id"]

    def _Escalate(self, b: Business, command: dict, v: dict) -> Expected:
        return Expected("accepted", None, ["EscalationRaised"], {"escalated": True})

    def _CompleteTurn(self, b: Business, command: dict, v: dict) -> Expected:
        turn = (command.get("conversation_id"), command.get("turn_id"))
        promises = command.get("_promises", False)  # the simulation knows what it wrote
        open_ = any(b.escalations.get(e) in ("open", "acknowledged") for e in b.turns.get(turn, []))
        if promises and not open_:
            return Expected("accepted", None, ["ReplyRecorded", "EscalationRaised"], {"escalated": True})
        return Expected("accepted", None, ["ReplyRecorded"], {"escalated": False})

    # --- owner rules ----------------------------------------------------------

    def _RegisterProduct(self, b: Business, command: dict, v: dict) -> Expected:
        if v["sku"] in b.products:
            return Expected("blocked", "already_exists", ["CommandBlocked"])
        return Expected("accepted", None, ["ProductRegistered"])

    def _learn_RegisterProduct(self, b: Business, command: dict, v: dict, out: dict) -> None:
        if out["status"] == "accepted":
            b.products[v["sku"]] = [v["unit_price"], v["stock"]]

    def _Restock(self, b: Business, command: dict, v: dict) -> Expected:
        if v["sku"] not in b.products:
            return Expected("blocked", "unknown_product", ["CommandBlocked"])
        return Expected("accepted", None, ["ProductRestocked"])

    def _learn_Restock(self, b: Business, command: dict, v: dict, out: dict) -> None:
        if out["status"] == "accepted":
            b.products[v["sku"]][1] += v["quantity"]

    def _SetPrice(self, b: Business, command: dict, v: dict) -> Expected:
        if v["sku"] not in b.products:
            return Expected("blocked", "unknown_product", ["CommandBlocked"])
        return Expected("accepted", None, ["PriceSet"])

    def _learn_SetPrice(self, b: Business, command: dict, v: dict, out: dict) -> None:
        if out["status"] == "accepted":
            b.products[v["sku"]][0] = v["unit_price"]

    def _RegisterCustomer(self, b: Business, command: dict, v: dict) -> Expected:
        if v["customer_id"] in b.customers:
            return Expected("blocked", "already_exists", ["CommandBlocked"])
        return Expected("accepted", None, ["CustomerRegistered"])

    def _learn_RegisterCustomer(self, b: Business, command: dict, v: dict, out: dict) -> None:
        if out["status"] == "accepted":
            b.customers[v["customer_id"]] = [v["credit_limit"], 0]

    def _SetCreditLimit(self, b: Business, command: dict, v: dict) -> Expected:
        if v["customer_id"] not in b.customers:
            return Expected("blocked", "unknown_customer", ["CommandBlocked"])
        return Expected("accepted", None, ["CreditLimitSet"])

    def _learn_SetCreditLimit(self, b: Business, command: dict, v: dict, out: dict) -> None:
        if out["status"] == "accepted":
            b.customers[v["customer_id"]][0] = v["credit_limit"]

    def _open(self, b: Business, escalation_id: str) -> Expected | None:
        status = b.escalations.get(escalation_id)
        if status is None:
            return Expected("blocked", "unknown_escalation", ["CommandBlocked"])
        if status in ("resolved", "dismissed"):
            return Expected("blocked", "already_closed", ["CommandBlocked"])
        return None

    def _AcknowledgeEscalation(self, b: Business, command: dict, v: dict) -> Expected:
        return self._open(b, v["escalation_id"]) or Expected("accepted", None, ["EscalationAcknowledged"])

    def _learn_AcknowledgeEscalation(self, b: Business, command: dict, v: dict, out: dict) -> None:
        if out["status"] == "accepted":
            b.escalations[v["escalation_id"]] = "acknowledged"

    def _CloseEscalation(self, b: Business, command: dict, v: dict) -> Expected:
        return self._open(b, v["escalation_id"]) or Expected("accepted", None, ["EscalationClosed"])

    def _learn_CloseEscalation(self, b: Business, command: dict, v: dict, out: dict) -> None:
        if out["status"] == "accepted":
            b.escalations[v["escalation_id"]] = v["resolution"]
            b.held.pop(v["escalation_id"], None)

    def _ApproveOrder(self, b: Business, command: dict, v: dict) -> Expected:
        closed = self._open(b, v["escalation_id"])
        if closed is not None:
            return closed
        if v["escalation_id"] not in b.held:
            return Expected("blocked", "not_approvable", ["CommandBlocked"])
        total = self._priced(b, b.held_customer[v["escalation_id"]], b.held[v["escalation_id"]])
        if isinstance(total, Expected):
            return total
        return Expected("accepted", None, ["OrderPlaced", "EscalationClosed"], {"total": total})

    def _learn_ApproveOrder(self, b: Business, command: dict, v: dict, out: dict) -> None:
        if out["status"] == "accepted":
            customer_id = b.held_customer[v["escalation_id"]]
            self._place(b, customer_id, b.held.pop(v["escalation_id"]), out)
            b.escalations[v["escalation_id"]] = "resolved"

    # --- the provider ---------------------------------------------------------

    def expect_payment(self, event_id: str, business_id: str, reference: str, amount: int, body: bytes) -> Expected:
        seen = self.payments.get(event_id)
        if seen is not None:
            if seen == body:
                return Expected("duplicate")
            return Expected("refused", "provider_event_reused", ["WebhookRefused"])
        b = self.business(business_id)
        order_id = b.links.get(reference)
        if order_id is None:
            return Expected("refused", "unknown_reference", ["WebhookRefused"])
        order = b.orders[order_id]
        flags = [] if order.link is not None and order.link[0] == reference else ["voided_link"]
        if amount > order.outstanding:
            flags.append("overpaid")
        return Expected("accepted", None, ["PaymentReceived"], {"flags": flags, "order_id": order_id})

    def learn_payment(self, event_id: str, business_id: str, reference: str, amount: int, body: bytes,
                      out: dict) -> None:
        if out.get("duplicate") or out["reason"] == "provider_event_reused":
            return
        self.payments[event_id] = body
        if out["status"] != "accepted":
            return
        b = self.business(business_id)
        order = b.orders[b.links[reference]]
        before = order.outstanding
        order.paid += amount
        b.customers[order.customer_id][1] -= before - order.outstanding
