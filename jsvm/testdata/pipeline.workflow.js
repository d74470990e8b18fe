// Pipeline stages get (prev, item, index); a throw drops only its item.
// want: [{"lens":"correctness","verdict":"echo: check echo: review correctness"},null,{"lens":"performance","verdict":"echo: check echo: review performance"}]
// calls: /pipe.0/0/stage.0 review correctness
// calls: /pipe.0/0/stage.1 check echo: review correctness
// calls: /pipe.0/1/stage.0 review security
// calls: /pipe.0/2/stage.0 review performance
// calls: /pipe.0/2/stage.1 check echo: review performance
export const meta = { name: 'lens-review', description: 'Review per lens, verify each', phases: [{ title: 'Review' }, { title: 'Verify' }] }
const LENSES = ['correctness', 'security', 'performance']
return await pipeline(LENSES,
  lens => agent(`review ${lens}`, { phase: 'Review' }),
  (found, lens, i) => {
    if (i === 1) throw new Error('no reviewer for ' + lens)
    return agent(`check ${found}`, { phase: 'Verify' }).then(verdict => ({ lens, verdict }))
  })
