import { invalidRequest } from './errors.js';
import type { PaymentIntent } from './objects.js';

// Stripe's search query language, for the PaymentIntent fields reconciliation needs:
//   metadata['orderId']:'ord_1' AND status:'requires_capture' AND created>1700000000
// Clauses are joined by AND or OR (not both), `-` negates a clause, strings are quoted,
// numbers are not. https://docs.stripe.com/search#search-query-language

type Operator = ':' | '~' | '>' | '<' | '>=' | '<=';
type Value = string | number;
type Predicate = (paymentIntent: PaymentIntent) => boolean;

const MAX_CLAUSES = 10;
const OPERATORS: readonly Operator[] = ['>=', '<=', ':', '~', '>', '<'];

function queryError(message: string): Error {
  return invalidRequest(message, { param: 'query' });
}

class Cursor {
  #position = 0;

  constructor(private readonly text: string) {}

  get done(): boolean {
    this.skipSpace();
    return this.#position >= this.text.length;
  }

  skipSpace(): void {
    while (this.text[this.#position] === ' ') this.#position += 1;
  }

  consume(literal: string): boolean {
    if (!this.text.startsWith(literal, this.#position)) return false;
    this.#position += literal.length;
    return true;
  }

  expect(literal: string): void {
    if (!this.consume(literal)) throw queryError(`Expected '${literal}' at position ${this.#position}.`);
  }

  identifier(): string {
    const match = /^[A-Za-z_]+/.exec(this.text.slice(this.#position));
    if (!match) throw queryError(`Expected a field name at position ${this.#position}.`);
    this.#position += match[0].length;
    return match[0];
  }

  operator(): Operator {
    const operator = OPERATORS.find((candidate) => this.consume(candidate));
    if (!operator) throw queryError(`Expected an operator at position ${this.#position}.`);
    return operator;
  }

  quoted(): string {
    const quote = this.text[this.#position];
    if (quote !== "'" && quote !== '"') {
      throw queryError(`Expected a quoted string at position ${this.#position}.`);
    }
    let value = '';
    for (let i = this.#position + 1; i < this.text.length; i += 1) {
      const char = this.text[i];
      if (char === '\\' && i + 1 < this.text.length) {
        i += 1;
        value += this.text[i];
      } else if (char === quote) {
        this.#position = i + 1;
        return value;
      } else {
        value += char;
      }
    }
    throw queryError('Unterminated string in query.');
  }

  value(): Value {
    const number = /^-?\d+/.exec(this.text.slice(this.#position));
    if (number) {
      this.#position += number[0].length;
      return Number(number[0]);
    }
    return this.quoted();
  }
}

function compareNumbers(field: string, operator: Operator, value: Value): (actual: number) => boolean {
  if (typeof value !== 'number') throw queryError(`Field '${field}' takes a number.`);
  switch (operator) {
    case ':':
      return (actual) => actual === value;
    case '>':
      return (actual) => actual > value;
    case '<':
      return (actual) => actual < value;
    case '>=':
      return (actual) => actual >= value;
    case '<=':
      return (actual) => actual <= value;
    case '~':
      throw queryError(`Field '${field}' does not support the '~' operator.`);
  }
}

function compareStrings(field: string, operator: Operator, value: Value): (actual: string | undefined) => boolean {
  if (typeof value !== 'string') throw queryError(`Field '${field}' takes a quoted string.`);
  if (operator === ':') return (actual) => actual === value;
  if (operator === '~') {
    if (value.length < 3) throw queryError("The '~' operator needs at least 3 characters.");
    return (actual) => actual?.includes(value) ?? false;
  }
  throw queryError(`Field '${field}' does not support the '${operator}' operator.`);
}

function clause(cursor: Cursor): Predicate {
  cursor.skipSpace();
  const negated = cursor.consume('-');
  const field = cursor.identifier();
  const metadataKey = field === 'metadata' ? readMetadataKey(cursor) : undefined;
  const operator = cursor.operator();
  const value = cursor.value();

  const predicate = fieldPredicate(field, metadataKey, operator, value);
  return negated ? (paymentIntent) => !predicate(paymentIntent) : predicate;
}

function readMetadataKey(cursor: Cursor): string {
  cursor.expect('[');
  const key = cursor.quoted();
  cursor.expect(']');
  return key;
}

function fieldPredicate(field: string, metadataKey: string | undefined, operator: Operator, value: Value): Predicate {
  switch (field) {
    case 'metadata': {
      const matches = compareStrings(field, operator, value);
      return (paymentIntent) => matches(paymentIntent.metadata[metadataKey ?? '']);
    }
    case 'status': {
      const matches = compareStrings(field, operator, value);
      return (paymentIntent) => matches(paymentIntent.status);
    }
    case 'currency': {
      const matches = compareStrings(field, operator, typeof value === 'string' ? value.toLowerCase() : value);
      return (paymentIntent) => matches(paymentIntent.currency);
    }
    case 'amount': {
      const matches = compareNumbers(field, operator, value);
      return (paymentIntent) => matches(paymentIntent.amount);
    }
    case 'created': {
      const matches = compareNumbers(field, operator, value);
      return (paymentIntent) => matches(paymentIntent.created);
    }
    default:
      throw queryError(`Field '${field}' is an unsupported search field for resource 'payment_intents'.`);
  }
}

/** Compiles a search query into a filter over PaymentIntents. */
export function parsePaymentIntentQuery(query: string): Predicate {
  const cursor = new Cursor(query);
  const clauses = [clause(cursor)];
  let joiner: 'AND' | 'OR' | undefined;

  while (!cursor.done) {
    const word = cursor.identifier();
    if (word !== 'AND' && word !== 'OR') throw queryError(`Expected AND or OR, found '${word}'.`);
    if (joiner !== undefined && joiner !== word) {
      throw queryError('A query cannot combine AND and OR; use one of them.');
    }
    joiner = word;
    clauses.push(clause(cursor));
    if (clauses.length > MAX_CLAUSES) throw queryError(`A query can have at most ${MAX_CLAUSES} clauses.`);
  }

  return joiner === 'OR'
    ? (paymentIntent) => clauses.some((matches) => matches(paymentIntent))
    : (paymentIntent) => clauses.every((matches) => matches(paymentIntent));
}
