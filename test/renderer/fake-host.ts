/** One fake Host serves every renderer test: see test/component/fake-host.ts. */
export { FakeHost, summaryOf } from '../component/fake-host'
