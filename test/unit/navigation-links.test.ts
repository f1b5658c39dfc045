import { describe, expect, it } from 'vitest'
import { linkTarget, projectLink, sessionLink } from '../../shared/navigation'

/** switchboard:// links: what each names, and every malformed one ignored with a reason (links are hostile input). */
describe('switchboard:// links', () => {
  it('reads the links the app makes back to what they name', () => {
    expect(linkTarget(sessionLink('5f0c2d1e-9a7b-4c3d-8e2f-1a2b3c4d5e6f'))).toEqual({
      target: { kind: 'session', id: '5f0c2d1e-9a7b-4c3d-8e2f-1a2b3c4d5e6f' }
    })
    expect(linkTarget(projectLink('/home/me/code/app & co?#'))).toEqual({ target: { kind: 'project', path: '/home/me/code/app & co?#' } })
    expect(linkTarget('SWITCHBOARD://session/abc/')).toEqual({ target: { kind: 'session', id: 'abc' } })
  })

  it.each([
    'switchboard://session/../../etc',
    'switchboard://session/%2e%2e',
    'switchboard://session/a/b',
    'switchboard://session/',
    'switchboard://session/abc?prompt=rm%20-rf',
    'switchboard://user:pw@session/abc',
    'switchboard://project',
    'switchboard://project?path=',
    'switchboard://project?path=/a&path=/b',
    'switchboard://project?path=/a&prompt=hi',
    'switchboard://settings?theme=dark',
    'https://example.com/session/abc',
    'not a link'
  ])('ignores %s', (link) => {
    expect(linkTarget(link)).toEqual({ ignored: expect.any(String) })
  })
})
