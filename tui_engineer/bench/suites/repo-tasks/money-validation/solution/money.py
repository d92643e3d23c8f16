from dataclasses import dataclass

CURRENCIES = {"EUR", "USD", "GBP"}


@dataclass(frozen=True)
class Money:
    amount: int  # cents
    currency: str

    def __post_init__(self):
        if self.amount < 0:
            raise ValueError(f"amount must not be negative, got {self.amount}")
        if self.currency not in CURRENCIES:
            raise ValueError(f"unknown currency {self.currency!r}")

    def __add__(self, other):
        if other.currency != self.currency:
            raise ValueError(f"cannot add {other.currency} to {self.currency}")
        return Money(self.amount + other.amount, self.currency)
