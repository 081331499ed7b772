import { describe, expect, it } from 'vitest';
import { allowedMethods, methodsByPath } from '../src/methods';

const routes = [
  { method: 'GET', path: '/events/:eventId/availability' },
  { method: 'POST', path: '/events/:eventId/holds' },
  { method: 'DELETE', path: '/events/:eventId/holds/:holdId' },
  { method: 'ALL', path: '*' },
];

describe('the methods a path answers to', () => {
  it('are those of the routes matching it, HEAD with GET', () => {
    expect(allowedMethods(routes, '/events/e1/availability')).toEqual(['GET', 'HEAD']);
    expect(allowedMethods(routes, '/events/e1/holds')).toEqual(['POST']);
    expect(allowedMethods(routes, '/events/e1/holds/h1')).toEqual(['DELETE']);
  });

  it('are none for a trailing slash: the routes match strictly, so that path is not found, not a wrong method', () => {
    const allowed = methodsByPath(routes);
    for (const path of ['/events/e1/availability/', '/events/e1/holds/', '/events/e1/holds/h1/'])
      expect(allowed(path), path).toEqual([]);
  });
});
